import { projectionSchema } from '@castlog/read-model';
import { openDatabaseAt } from '@castlog/runtime';
import { feed } from '../../../../test/support/contract';
import { CastlogUnderTest, startCastlog } from '../../../../test/support/start-castlog';
import { ProjectionEntry, projections, ProjectionsDeps } from './projections.command';

function io() {
  const stdout = { text: '', write: (chunk: string) => (stdout.text += chunk) };
  const stderr = { text: '', write: (chunk: string) => (stderr.text += chunk) };
  return { stdout, stderr };
}

describe('castlog projections', () => {
  let app: CastlogUnderTest;
  const deps = (): ProjectionsDeps & ReturnType<typeof io> => ({
    ...io(),
    dataSource: app.runtime.database.dataSource,
    eventLog: app.runtime.eventLog,
    versions: app.runtime.readModel.versions,
  });

  beforeAll(async () => {
    app = await startCastlog({ log: 'postgres' });
    const user = await app.freshUser();
    for (let i = 0; i < 3; i++)
      expect(
        (await app.as(user).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed() }] })).status,
      ).toBe(200);
  });
  afterAll(() => app?.close());

  it('lists the active version with what it has applied, and a registered version still building', async () => {
    const base = app.config.READ_MODEL_SCHEMA;
    // Version 2 registered (its schema made) but not yet projected: everything is still to apply.
    const v2 = await openDatabaseAt(app.databaseUrl, projectionSchema(base, 2), 1);
    await app.runtime.readModel.versions.register(2);
    await v2.close();

    const d = deps();
    expect(await projections(d, { json: true })).toBe(0);
    const entries = JSON.parse(d.stdout.text) as ProjectionEntry[];
    expect(entries).toEqual([
      expect.objectContaining({ version: 1, schema: base, status: 'active', applied: 3, lag: 0 }),
      expect.objectContaining({
        version: 2,
        schema: `${base}_v2`,
        status: 'building',
        applied: 0,
        lag: 3,
        activatedAt: null,
      }),
    ]);

    const table = deps();
    expect(await projections(table)).toBe(0);
    expect(table.stdout.text).toMatch(new RegExp(`│ 1 +│ ${base} +│ active +│ 3 +│ 0 `));
    expect(table.stdout.text).toMatch(new RegExp(`│ 2 +│ ${base}_v2 +│ building +│ 0 +│ 3 `));
    expect(table.stderr.text).toBe('');
  });
});
