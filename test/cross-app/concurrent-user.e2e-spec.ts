import { describeDifference, verifyReplay } from '@castlog/replay';
import { feed, guid } from '../support/contract';
import { uniqueName } from '../support/databases';
import { seededRandom } from '../support/seeded-random';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

const REQUESTS = 200;

describe('many concurrent requests of one user', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => {
    app = await startCastlog();
    alice = await app.freshUser();
  });
  afterAll(() => app?.close());

  it('end in the state a sequential replay of the log makes', async () => {
    const seed = Number(process.env.CASTLOG_TEST_SEED ?? Date.now() % 1_000_000);
    const next = seededRandom(seed);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
    // Few guids and feeds, so requests collide: matches, merges, deletions racing with updates.
    const guids = Array.from({ length: 8 }, () => guid());
    const feeds = Array.from({ length: 8 }, (_, i) => feed(`f${i}`));
    const as = app.as(alice);
    const seeded = await as.post('/v1/subscriptions', {
      subscriptions: guids.slice(0, 4).map((g, i) => ({ feed_url: feeds[i], guid: g })),
    });
    expect(seeded.status).toBe(200);

    const request = () => {
      const roll = next();
      if (roll < 0.35) {
        const items = Array.from({ length: 1 + Math.floor(next() * 3) }, () =>
          next() < 0.5 ? { feed_url: pick(feeds), guid: pick(guids) } : { feed_url: pick(feeds) },
        );
        return {
          label: 'POST',
          send: () => as.post('/v1/subscriptions', { subscriptions: items }),
          ok: [200],
        };
      }
      if (roll < 0.75) {
        const body = pick([
          { is_subscribed: next() < 0.5 },
          { new_feed_url: pick(feeds) },
          { new_guid: pick(guids) },
          { new_guid: pick(guids), is_subscribed: next() < 0.5 },
        ]);
        return {
          label: 'PATCH',
          send: () => as.patch(`/v1/subscriptions/${pick(guids)}`, body),
          ok: [200, 404, 410],
        };
      }
      return { label: 'DELETE', send: () => as.delete(`/v1/subscriptions/${pick(guids)}`), ok: [202, 404] };
    };
    const planned = Array.from({ length: REQUESTS }, request);
    const responses = await Promise.all(planned.map((p) => p.send()));
    const unexpected = responses
      .map((response, i) => ({
        label: planned[i]!.label,
        status: response.status,
        ok: planned[i]!.ok,
        body: response.text,
      }))
      .filter((r) => !r.ok.includes(r.status));
    expect({ seed, unexpected }).toEqual({ seed, unexpected: [] });

    // The saga finishes what the DELETEs started: wait until no deletion is pending or unlogged.
    const { dataSource, schema } = app.runtime.database;
    await app.until('every deletion finalized and logged', async () => {
      const [row] = await dataSource.query(
        `SELECT (SELECT count(*) FROM "${schema}".deletions WHERE user_id = $1 AND status = 'PENDING')::int
              + (SELECT count(*) FROM "${schema}".deletion_saga WHERE user_id = $1 AND NOT logged)::int AS open`,
        [alice.id],
      );
      return row.open === 0;
    });

    const differences = await verifyReplay({
      dataSource,
      eventLog: app.runtime.eventLog,
      schema: uniqueName('scratch'),
      liveSchema: schema,
    });
    expect({ seed, differences: differences.map(describeDifference) }).toEqual({ seed, differences: [] });
    const [{ events }] = await dataSource.query(
      `SELECT count(*)::int AS events FROM "${schema}".request_outcomes WHERE user_id = $1`,
      [alice.id],
    );
    expect(events).toBeGreaterThanOrEqual(REQUESTS + 1);
  }, 120_000);
});
