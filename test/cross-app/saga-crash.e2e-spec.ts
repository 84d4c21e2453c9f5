import { LogEvent } from '@castlog/domain';
import { describeDifference, verifyReplay } from '@castlog/replay';
import { feed, guid } from '../support/contract';
import { uniqueName } from '../support/databases';
import { RunningChild, startBuilt, startChild } from '../support/processes';
import { CastlogUnderTest, childProjectorEnv, startCastlog } from '../support/start-castlog';

/** The deletion saga killed (SIGKILL) after its transaction committed and before it appended its
 * result: the restarted projector's recovery sweep appends the result once, and the deletion ends
 * SUCCESS exactly once. The crash comes from this test's own projector entry point
 * (saga-crash.projector.ts: the projector module with a fault hook that kills the process after the
 * saga's transaction), run as a child built with `npm run build`, as the restarted projector is. */
describe('a crash between the deletion saga transaction and its outcome event', () => {
  let app: CastlogUnderTest;
  let projectorEnv: NodeJS.ProcessEnv;
  const children: RunningChild[] = [];
  const started = (child: RunningChild) => {
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    // The API in this process; the projector and its saga only in child processes.
    app = await startCastlog({ projector: false });
    // The group gives the killed member's partitions to the restarted one after this. At `info`, a
    // wait that fails quotes the projectors' account of their start-up (`explaining`).
    projectorEnv = childProjectorEnv(app, { KAFKA_SESSION_TIMEOUT: '10s', LOG_LEVEL: 'info' });
  });
  afterAll(async () => {
    for (const child of children)
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await app?.close();
  });

  const completionsOf = async (deletionId: number) => {
    const found: Extract<LogEvent, { type: 'DeletionCompleted' }>[] = [];
    await app.runtime.eventLog.readToEnd(async (batch) => {
      for (const { value } of batch.records) {
        if (value.type === 'DeletionCompleted' && value.deletionId === deletionId) found.push(value);
      }
    });
    return found;
  };

  it('ends the deletion SUCCESS exactly once after a restart', async () => {
    const { dataSource, schema } = app.runtime.database;
    const alice = await app.freshUser();
    const g = guid();
    const crashing = started(
      startBuilt('dist/test/cross-app/saga-crash.projector.js', projectorEnv, 'crashing projector'),
    );
    const added = await app
      .as(alice)
      .post('/v1/subscriptions', { subscriptions: [{ feed_url: feed(), guid: g }] });
    expect(added.status).toBe(200);

    const deletion = await app.as(alice).delete(`/v1/subscriptions/${g}`);
    expect(deletion.status).toBe(202);
    const deletionId: number = deletion.body.deletion_id;
    expect(await crashing.exited(30_000)).toEqual({ code: null, signal: 'SIGKILL' });

    // The crash left the saga's committed result unlogged, and the deletion pending.
    const [saga] = await dataSource.query(`SELECT * FROM "${schema}".deletion_saga WHERE deletion_id = $1`, [
      deletionId,
    ]);
    expect(saga).toEqual(
      expect.objectContaining({ result: 'COMPLETED', logged: false, deleted_at: expect.any(String) }),
    );
    expect(await completionsOf(deletionId)).toEqual([]);
    expect((await app.as(alice).get(`/v1/deletions/${deletionId}`)).body.status).toBe('PENDING');

    const restarted = started(startChild('projector', projectorEnv));
    // The dead consumer holds its partitions until its session timeout (10 s) ends; the bound leaves
    // room for a group rejoin on a loaded machine.
    await restarted.explaining(
      app.until(
        'the deletion to be SUCCESS',
        async () => (await app.as(alice).get(`/v1/deletions/${deletionId}`)).body.status === 'SUCCESS',
        120_000,
      ),
    );
    // Everything in the log applied, then a clean stop: any sweep in flight finishes first.
    await app.untilProjectionAtEnd();
    restarted.child.kill('SIGTERM');
    expect(await restarted.exited(30_000)).toEqual({ code: 0, signal: null });

    // Exactly one result in the log, carrying the saga's deleted_at; the deletion took effect once,
    // when the projector applied that record, at the record's instant (not before the saga decided).
    const completions = await completionsOf(deletionId);
    expect(completions).toEqual([
      { type: 'DeletionCompleted', userId: alice.id, deletionId, deletedAt: Number(saga.deleted_at) },
    ]);
    const [applied] = await dataSource.query(
      `SELECT instant FROM "${schema}".request_outcomes WHERE user_id = $1 AND event_type = 'DeletionCompleted'`,
      [alice.id],
    );
    expect(Number(applied.instant)).toBeGreaterThanOrEqual(Number(saga.deleted_at));
    const [sub] = await dataSource.query(
      `SELECT s.deleted, s.subscription_changed, s.is_subscribed, s.deletion_id, d.status, d.finished_at
         FROM "${schema}".subscriptions s JOIN "${schema}".deletions d ON d.deletion_id = s.deletion_id
        WHERE s.user_id = $1 AND s.id = $2`,
      [alice.id, g],
    );
    expect(sub).toEqual({
      deleted: applied.instant,
      subscription_changed: applied.instant,
      is_subscribed: false,
      deletion_id: String(deletionId),
      status: 'SUCCESS',
      finished_at: applied.instant,
    });
    const [after] = await dataSource.query(
      `SELECT logged FROM "${schema}".deletion_saga WHERE deletion_id = $1`,
      [deletionId],
    );
    expect(after.logged).toBe(true);
    expect((await app.as(alice).get(`/v1/subscriptions/${g}`)).status).toBe(410);

    const differences = await verifyReplay({
      dataSource,
      eventLog: app.runtime.eventLog,
      schema: uniqueName('scratch'),
      liveSchema: schema,
      liveTimeoutMs: 10_000,
    });
    expect(differences.map(describeDifference)).toEqual([]);
  }, 180_000);
});
