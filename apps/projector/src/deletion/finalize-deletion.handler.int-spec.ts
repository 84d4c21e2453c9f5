import { LOG_EVENT_VERSION, LogEvent } from '@castlog/domain';
import { LogBatch, PostgresEventLog } from '@castlog/event-log';
import { ActiveProjection, Database, openActiveProjection, poolOf } from '@castlog/read-model';
import { describeDifference, verifyReplay } from '@castlog/replay';
import { openDatabaseAt } from '@castlog/runtime';
import { randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import { createTestDatabase, uniqueName } from '../../../../test/support/databases';
import { poll } from '../../../../test/support/until';
import { applyBatch } from '@castlog/projection';
import { FinalizeDeletionCommand } from './finalize-deletion.command';
import { FinalizeDeletionHandler } from './finalize-deletion.handler';

const SCHEMA = 'castlog';

/** The saga against PostgreSQL and the table log: whoever runs it for a deletion id, however often
 * and however concurrently, the deletion is finalized once. The projection is applied by hand with
 * the projector's own `applyBatch`, so each step's effect can be looked at. */
describe('FinalizeDeletionHandler', () => {
  let database: Database;
  let pool: Pool;
  let eventLog: PostgresEventLog;
  let readModel: ActiveProjection;

  beforeAll(async () => {
    database = await openDatabaseAt(await createTestDatabase('finalize_deletion'), SCHEMA, 4);
    readModel = await openActiveProjection(database, SCHEMA, 1);
    pool = new Pool({ connectionString: database.url, max: 2 });
    eventLog = new PostgresEventLog(pool);
  });
  afterAll(async () => {
    await eventLog?.close();
    await pool?.end();
    await database?.close();
  });

  const handler = (faults = {}, concurrency = 2) =>
    new FinalizeDeletionHandler(
      database,
      eventLog,
      readModel,
      { DELETION_SAGA_CONCURRENCY: concurrency },
      faults,
    );

  const append = (event: LogEvent) =>
    eventLog.append([
      {
        key: event.userId,
        type: event.type,
        version: LOG_EVENT_VERSION,
        eventId: randomUUID(),
        requestId: randomUUID(),
        value: event,
      },
    ]);

  /** Applies whatever the log holds past the stored offsets, as the projector does. */
  const project = async () => {
    const batches: LogBatch[] = [];
    await eventLog.readToEnd(async (batch) => void batches.push(batch));
    for (const batch of batches) await applyBatch(database.dataSource, SCHEMA, batch, eventLog.partitions);
  };

  /** A user with one subscription and a pending deletion of it, projected. */
  const pendingDeletion = async (): Promise<{ userId: string; deletionId: number }> => {
    const [userId, guid] = [randomUUID(), randomUUID()];
    await append({
      type: 'SubscriptionsAddRequested',
      userId,
      items: [{ feedUrl: `https://${uniqueName('feed')}.example.com/rss`, candidateGuid: guid }],
    });
    await append({ type: 'DeletionRequested', userId, guid });
    await project();
    const [row] = await database.dataSource.query(
      `SELECT deletion_id, status FROM ${SCHEMA}.deletions WHERE user_id = $1`,
      [userId],
    );
    expect(row.status).toBe('PENDING');
    return { userId, deletionId: Number(row.deletion_id) };
  };

  const resultsInLog = async (deletionId: number) => {
    const found: LogEvent[] = [];
    await eventLog.readToEnd(async (batch) => {
      for (const { value } of batch.records)
        if (
          (value.type === 'DeletionCompleted' || value.type === 'DeletionFailed') &&
          value.deletionId === deletionId
        )
          found.push(value);
    });
    return found;
  };

  const sagaRows = (deletionId: number) =>
    database.dataSource.query(`SELECT result, logged FROM ${SCHEMA}.deletion_saga WHERE deletion_id = $1`, [
      deletionId,
    ]);

  /** After projecting: the deletion's status and the instants it took effect at. */
  const finalized = async (userId: string, deletionId: number) => {
    await project();
    const [row] = await database.dataSource.query(
      `SELECT d.status, d.finished_at, s.deleted, s.is_subscribed
         FROM ${SCHEMA}.deletions d JOIN ${SCHEMA}.subscriptions s ON s.user_id = d.user_id AND s.id = d.subscription_id
        WHERE d.deletion_id = $1 AND d.user_id = $2`,
      [deletionId, userId],
    );
    return row;
  };

  it('run twice for one deletion id: one cascade, one result in the log', async () => {
    const { userId, deletionId } = await pendingDeletion();
    const saga = handler();
    const command = new FinalizeDeletionCommand(userId, deletionId);
    expect(await saga.execute(command)).toBe('COMPLETED');
    expect(await saga.execute(command)).toBe('COMPLETED');
    expect(await handler().execute(command)).toBe('COMPLETED');

    expect(await sagaRows(deletionId)).toEqual([{ result: 'COMPLETED', logged: true }]);
    const results = await resultsInLog(deletionId);
    expect(results).toEqual([
      { type: 'DeletionCompleted', userId, deletionId, deletedAt: expect.any(Number) },
    ]);
    expect(await finalized(userId, deletionId)).toEqual(
      expect.objectContaining({ status: 'SUCCESS', is_subscribed: false }),
    );
    // Once SUCCESS, running it again appends nothing.
    expect(await saga.execute(command)).toBe('COMPLETED');
    expect(await resultsInLog(deletionId)).toHaveLength(1);
  });

  it('run concurrently by one process: the second run answers ALREADY_FINALIZED', async () => {
    const { userId, deletionId } = await pendingDeletion();
    const saga = handler();
    const command = new FinalizeDeletionCommand(userId, deletionId);
    const results = await Promise.all([saga.execute(command), saga.execute(command)]);
    expect(results.sort()).toEqual(['ALREADY_FINALIZED', 'COMPLETED']);
    expect(await sagaRows(deletionId)).toEqual([{ result: 'COMPLETED', logged: true }]);
    expect(await resultsInLog(deletionId)).toHaveLength(1);
  });

  it('run concurrently by two replicas: one cascade, and the deletion is finalized once', async () => {
    const { userId, deletionId } = await pendingDeletion();
    const command = new FinalizeDeletionCommand(userId, deletionId);
    const results = await Promise.all([handler().execute(command), handler().execute(command)]);
    expect(results).toEqual(['COMPLETED', 'COMPLETED']);
    // The user's clock lock lets one cascade run; the other reuses its row.
    expect(await sagaRows(deletionId)).toEqual([{ result: 'COMPLETED', logged: true }]);
    // Both replicas may append that one result: it carries the same deletedAt, and a second copy
    // changes nothing once the first has made the deletion SUCCESS.
    const logged = await resultsInLog(deletionId);
    expect(logged.length).toBeGreaterThanOrEqual(1);
    expect(new Set(logged.map((event) => JSON.stringify(event))).size).toBe(1);
    await project();
    const [first] = await database.dataSource.query(
      `SELECT instant FROM ${SCHEMA}.request_outcomes
        WHERE user_id = $1 AND event_type = 'DeletionCompleted' ORDER BY "offset" LIMIT 1`,
      [userId],
    );
    expect(await finalized(userId, deletionId)).toEqual({
      status: 'SUCCESS',
      finished_at: first.instant,
      deleted: first.instant,
      is_subscribed: false,
    });
    const differences = await verifyReplay({
      dataSource: database.dataSource,
      eventLog,
      schema: uniqueName('scratch'),
      liveSchema: SCHEMA,
      liveTimeoutMs: 5_000,
    });
    expect(differences.map(describeDifference)).toEqual([]);
  });

  it('after a crash between its steps, the recovery sweep appends the recorded result once', async () => {
    const { userId, deletionId } = await pendingDeletion();
    const command = new FinalizeDeletionCommand(userId, deletionId);
    const crashing = handler({
      afterCascade: () => {
        throw new Error('crashed after the cascade');
      },
    });
    await expect(crashing.execute(command)).rejects.toThrow('crashed after the cascade');
    expect(await sagaRows(deletionId)).toEqual([{ result: 'COMPLETED', logged: false }]);
    expect(await resultsInLog(deletionId)).toEqual([]);

    const ran: number[] = [];
    const run = async (_userId: string, id: number) => {
      ran.push(id);
      return 'COMPLETED' as const;
    };
    await handler().sweep(run);
    await handler().sweep(run);
    // Its saga row exists, so the sweep does not run the cascade again: it only logs the result.
    expect(ran).not.toContain(deletionId);
    expect(await sagaRows(deletionId)).toEqual([{ result: 'COMPLETED', logged: true }]);
    expect(await resultsInLog(deletionId)).toHaveLength(1);
    expect((await finalized(userId, deletionId)).status).toBe('SUCCESS');
  });

  /** A transaction of another connection that holds the clock locks of `userIds`, as a
   * projector's transaction holds those of every user its batch reaches until it commits. */
  const holdClocks = async (userIds: string[]) => {
    const [holder, observer] = [database.url, database.url].map(
      (url) => new Client({ connectionString: url }),
    );
    await Promise.all([holder!.connect(), observer!.connect()]);
    await holder!.query('BEGIN');
    await holder!.query(`SELECT 1 FROM ${SCHEMA}.user_clocks WHERE user_id = ANY($1) FOR UPDATE`, [userIds]);
    return {
      /** Backends of this database waiting for a lock. Asked outside a transaction: within one,
       * PostgreSQL answers pg_stat_activity from the snapshot taken at its first read. */
      waiting: async () => {
        const [{ count }] = (
          await observer!.query(
            `SELECT count(*)::int AS count FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          )
        ).rows;
        return count as number;
      },
      release: async () => {
        await holder!.query('COMMIT');
        await Promise.all([holder!.end(), observer!.end()]);
      },
    };
  };

  /** Connections of the read-model pool handed out and not yet given back. */
  const poolInUse = () => {
    const readPool = poolOf(database.dataSource);
    return readPool.totalCount - readPool.idleCount;
  };

  /** `count` pending deletions whose users' clocks another connection holds, each being finalized
   * by `saga` at once. */
  const finalizingBehindLocks = async (count: number, saga: FinalizeDeletionHandler) => {
    const deletions: { userId: string; deletionId: number }[] = [];
    for (let i = 0; i < count; i += 1) deletions.push(await pendingDeletion());
    const locks = await holdClocks(deletions.map(({ userId }) => userId));
    const results = Promise.all(
      deletions.map(({ userId, deletionId }) =>
        saga.execute(new FinalizeDeletionCommand(userId, deletionId)),
      ),
    );
    return { deletions, locks, results };
  };

  it('runs at most DELETION_SAGA_CONCURRENCY cascades at once while their users are locked, leaving the pool to others', async () => {
    const saga = handler({}, 2);
    const { deletions, locks, results } = await finalizingBehindLocks(6, saga);
    try {
      // Once four wait for a turn, two have passed the limit and nothing else can start while
      // the clocks are held: the state below is settled, not a moment of a race.
      await poll(
        'two cascades at their clock locks and four waiting for a turn',
        async () => (await locks.waiting()) >= 2 && saga.waitingForTurn === 4,
        { timeoutMs: 20_000 },
      );
      // Six cascades at once would hold every connection of the pool (4) and wait.
      expect(await locks.waiting()).toBe(2);
      expect(poolInUse()).toBe(2);
      expect(await database.dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await locks.release();
    }
    expect(await results).toEqual(deletions.map(() => 'COMPLETED'));
    for (const { userId, deletionId } of deletions)
      expect((await finalized(userId, deletionId)).status).toBe('SUCCESS');
  });

  it('stopping, lets the finalization under way end and leaves the waiting ones pending for the sweep', async () => {
    const saga = handler({}, 1);
    const { deletions, locks, results } = await finalizingBehindLocks(3, saga);
    let stopped: Promise<void>;
    try {
      await poll('a cascade waiting for its clock lock', async () => (await locks.waiting()) >= 1, {
        timeoutMs: 20_000,
      });
      stopped = saga.onModuleDestroy();
    } finally {
      await locks.release();
    }
    await stopped;
    expect(await results).toEqual(['COMPLETED', 'DEFERRED', 'DEFERRED']);
    expect(await sagaRows(deletions[1]!.deletionId)).toEqual([]);
    expect(await sagaRows(deletions[2]!.deletionId)).toEqual([]);
    const [{ status }] = await database.dataSource.query(
      `SELECT status FROM ${SCHEMA}.deletions WHERE deletion_id = $1`,
      [deletions[2]!.deletionId],
    );
    expect(status).toBe('PENDING');
    // The next process's sweep finalizes them.
    const next = handler();
    await next.sweep((userId, deletionId) => next.execute(new FinalizeDeletionCommand(userId, deletionId)));
    for (const { userId, deletionId } of deletions)
      expect((await finalized(userId, deletionId)).status).toBe('SUCCESS');
  });

  it('with the log out of reach, records the result, answers DEFERRED and leaves its append to the sweep', async () => {
    const { userId, deletionId } = await pendingDeletion();
    const closedPool = new Pool({ connectionString: database.url, max: 1 });
    await closedPool.end();
    const unreachable = new FinalizeDeletionHandler(database, new PostgresEventLog(closedPool), readModel, {
      DELETION_SAGA_CONCURRENCY: 2,
    });
    expect(await unreachable.execute(new FinalizeDeletionCommand(userId, deletionId))).toBe('DEFERRED');
    expect(await sagaRows(deletionId)).toEqual([{ result: 'COMPLETED', logged: false }]);
    expect(await resultsInLog(deletionId)).toEqual([]);

    await handler().sweep(async () => 'COMPLETED');
    expect(await sagaRows(deletionId)).toEqual([{ result: 'COMPLETED', logged: true }]);
    expect(await resultsInLog(deletionId)).toHaveLength(1);
    expect((await finalized(userId, deletionId)).status).toBe('SUCCESS');
  });
});
