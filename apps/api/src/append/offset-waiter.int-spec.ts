import { RequestOutcome } from '@castlog/domain';
import {
  ActiveProjection,
  Database,
  inTransaction,
  LocalCommits,
  OutcomesQuery,
  projectionSchema,
  ProjectionVersions,
  quoteIdent,
  Sql,
} from '@castlog/read-model';
import { DependencyHealth } from '@castlog/supervision';
import { randomUUID } from 'node:crypto';
import {
  openReadModelTestDatabase,
  storeOffsets,
} from '../../../../libs/read-model/src/testing/read-model-database';
import { poll } from '../../../../test/support/until';
import { OffsetWaiter } from './offset-waiter';

const BASE = 'rm';
const V2 = projectionSchema(BASE, 2);
const COMPONENT = 'offset-notices';

/** An outcome told apart by its label. */
const recorded = (label: string): RequestOutcome => ({
  kind: 'Added',
  success: [],
  failure: [{ feedUrl: label, message: 'a fixture' }],
});

/** What a projector transaction commits for the record at (partition, offset): its outcome, the
 * partition's next offset past it and, unless `notify` is false, the notice. */
async function apply(
  database: Database,
  schema: string,
  partition: number,
  offset: number,
  outcome: RequestOutcome | null,
  { notify = true, eventId = randomUUID() } = {},
): Promise<void> {
  await inTransaction(database.dataSource, async (sql: Sql) => {
    if (outcome)
      await sql.query(
        `INSERT INTO ${quoteIdent(schema)}.request_outcomes
           (partition, "offset", user_id, event_id, request_id, event_type, instant, outcome)
         VALUES ($1, $2, 'user', $3, 'request', 'SubscriptionsAddRequested', 1, $4)`,
        [partition, offset, eventId, JSON.stringify(outcome)],
      );
    await storeOffsets(sql, schema, { [partition]: offset + 1 }, { notify });
  });
}

/** The OffsetWaiter against PostgreSQL: woken by the projector's NOTIFY, bounded by its timeout,
 * deaf for no longer than its connection is down, and following projection switches. */
describe('OffsetWaiter', () => {
  let database: Database;
  let readModel: ActiveProjection;
  let health: DependencyHealth;
  let waiter: OffsetWaiter;

  beforeEach(async () => {
    database = await openReadModelTestDatabase('offset_waiter', [BASE, V2]);
    const versions = new ProjectionVersions(database.dataSource, BASE);
    readModel = new ActiveProjection(versions, await versions.register(1));
    await versions.register(2);
    health = new DependencyHealth();
    waiter = new OffsetWaiter(database.url, database.dataSource, readModel, health);
    await waiter.start();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await waiter?.close();
    await database?.close();
  });

  it("answers a request's stored outcome once the projector's notice says its record is applied", async () => {
    const waiting = waiter.outcomeOf(0, 2, 10_000);
    await apply(database, BASE, 0, 0, recorded('first'));
    await apply(database, BASE, 0, 1, recorded('second'));
    await apply(database, BASE, 0, 2, recorded('third'));
    expect(await waiting).toEqual(recorded('third'));
  });

  it('answers at once for a record applied before it asked, read from the table', async () => {
    await apply(database, BASE, 1, 4, recorded('applied'), { notify: false });
    expect(await waiter.outcomeOf(1, 4, 50)).toEqual(recorded('applied'));
  });

  it('answers timed-out after its bound, and the record still applies later', async () => {
    // Once the partition's offset is known, a wait involves no I/O: only its bound's timer, on a
    // clock the test moves, can answer it.
    expect(await waiter.outcomeOf(0, 0, 1)).toBe('timed-out');
    jest.useFakeTimers({
      doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask', 'Date'],
    });
    try {
      let answered = false;
      const bounded = waiter.outcomeOf(0, 0, 200).finally(() => (answered = true));
      await jest.advanceTimersByTimeAsync(199);
      expect(answered).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      expect(await bounded).toBe('timed-out');
    } finally {
      jest.useRealTimers();
    }
    await apply(database, BASE, 0, 0, recorded('late'));
    await poll('the late outcome', async () => (await waiter.outcomeOf(0, 0, 1_000)) !== 'timed-out');
    expect(await waiter.outcomeOf(0, 0, 1_000)).toEqual(recorded('late'));
  });

  it('answers missing when its position is passed without an outcome', async () => {
    const waiting = waiter.outcomeOf(2, 0, 10_000);
    await apply(database, BASE, 2, 0, null);
    expect(await waiting).toBe('missing');
  });

  it("answers its own event's outcome, and missing when the position holds another event's", async () => {
    const mine = randomUUID();
    const waiting = waiter.outcomeOf(3, 0, 10_000, mine);
    await apply(database, BASE, 3, 0, recorded('mine'), { eventId: mine });
    expect(await waiting).toEqual(recorded('mine'));
    // The log lost an acknowledged record and gave its offset to another event: not this request's.
    const lost = waiter.outcomeOf(3, 1, 10_000, randomUUID());
    await apply(database, BASE, 3, 1, recorded('another request'));
    expect(await lost).toBe('missing');
    expect(await waiter.outcomeOf(3, 1, 50, randomUUID())).toBe('missing');
    expect(await waiter.outcomeOf(3, 0, 50, mine)).toEqual(recorded('mine'));
  });

  it('reads an outcome again after a failed read, and answers unknown (never missing) when it cannot by the deadline', async () => {
    const reads = jest
      .spyOn(OutcomesQuery.prototype, 'atPositions')
      .mockRejectedValueOnce(new Error('Connection terminated unexpectedly'));
    const recovered = waiter.outcomeOf(6, 0, 10_000);
    await apply(database, BASE, 6, 0, recorded('read again'));
    expect(await recovered).toEqual(recorded('read again'));
    expect(reads).toHaveBeenCalledTimes(2);

    reads.mockRejectedValue(new Error('Connection terminated unexpectedly'));
    const unread = waiter.outcomeOf(6, 1, 500);
    await apply(database, BASE, 6, 1, recorded('unread'));
    expect(await unread).toBe('unknown');
    // Known to be passed: read at once, and as unknown when that keeps failing.
    expect(await waiter.outcomeOf(6, 0, 300)).toBe('unknown');
  });

  it("ignores another version's notices", async () => {
    const waiting = waiter.outcomeOf(0, 0, 500);
    await apply(database, V2, 0, 0, recorded('other version'));
    expect(await waiting).toBe('timed-out');
  });

  it('after its connection is lost, reconnects by itself and re-reads what it missed meanwhile', async () => {
    const waiting = waiter.outcomeOf(0, 3, 30_000);
    // Applied silently: only re-reading the table after the reconnection can release the request.
    await apply(database, BASE, 0, 3, recorded('missed'), { notify: false });
    const states: string[] = [];
    health.observe({ lost: () => states.push('lost'), restored: () => states.push('restored') });
    const [terminated] = await database.dataSource.query(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
    );
    expect(terminated.n).toBe(1);
    expect(await waiting).toEqual(recorded('missed'));
    await poll('the listener to report it is back', () => states.includes('restored'));
    expect(states).toEqual(['lost', 'restored']);
    expect(health.isDown(COMPONENT)).toBe(false);

    // And it hears notices again.
    const next = waiter.outcomeOf(0, 4, 10_000);
    await apply(database, BASE, 0, 4, recorded('heard'));
    expect(await next).toEqual(recorded('heard'));
  });

  it('follows a projection switch: a request waiting on the old version is answered from the new one', async () => {
    const waiting = waiter.outcomeOf(0, 5, 10_000);
    // Version 2 has applied the record; version 1 has not.
    for (let offset = 0; offset <= 5; offset += 1)
      await apply(database, V2, 0, offset, recorded(`v2 ${offset}`), { notify: false });
    expect(await readModel.versions.activateIfCaughtUp(2)).toBe('activated');
    expect(await waiting).toEqual(recorded('v2 5'));
    expect(readModel.version).toBe(2);
    // Version 1's notices no longer release anything.
    const next = waiter.outcomeOf(0, 6, 300);
    await apply(database, BASE, 0, 6, recorded('v1 6'));
    expect(await next).toBe('timed-out');
  });

  describe('with a projector in the same process', () => {
    let commits: LocalCommits;
    let local: OffsetWaiter;
    beforeEach(async () => {
      commits = new LocalCommits();
      local = new OffsetWaiter(database.url, database.dataSource, readModel, health, commits);
      await local.start();
    });
    afterEach(() => local?.close());

    /** What the projector tells of a commit in `schema` that moved `partition` to `next`. */
    const commit = (
      schema: string,
      partition: number,
      next: number,
      ...outcomes: [number, string, string][]
    ) =>
      commits.publish({
        schema,
        partitions: [
          {
            partition,
            nextOffset: next,
            outcomes: outcomes.map(([offset, eventId, label]) => ({
              partition,
              offset,
              eventId,
              outcome: recorded(label),
            })),
          },
        ],
      });

    it('answers the outcome the commit carries, without reading it (the table holds none)', async () => {
      const mine = randomUUID();
      const waiting = local.outcomeOf(4, 1, 10_000, mine);
      const anyEvent = local.outcomeOf(4, 0, 10_000);
      commit(BASE, 4, 2, [0, randomUUID(), 'first'], [1, mine, 'mine']);
      expect(await Promise.all([waiting, anyEvent])).toEqual([recorded('mine'), recorded('first')]);
    });

    it("answers missing when the commit's outcome at its position is another event's", async () => {
      const waiting = local.outcomeOf(4, 0, 10_000, randomUUID());
      commit(BASE, 4, 1, [0, randomUUID(), 'another request']);
      expect(await waiting).toBe('missing');
    });

    it('reads the outcome of a record an earlier commit applied, which this one does not carry', async () => {
      await apply(database, BASE, 5, 0, recorded('earlier'), { notify: false });
      const waiting = local.outcomeOf(5, 0, 10_000);
      commit(BASE, 5, 2, [1, randomUUID(), 'later']);
      expect(await waiting).toEqual(recorded('earlier'));
    });

    /** A waiter of its own whose NOTIFY of a partition committed here waits `graceMs` for the commit. */
    const withGrace = async <T>(graceMs: number, use: (patient: OffsetWaiter) => Promise<T>) => {
      const patient = new OffsetWaiter(
        database.url,
        database.dataSource,
        readModel,
        health,
        commits,
        graceMs,
      );
      await patient.start();
      try {
        return await use(patient);
      } finally {
        await patient.close();
      }
    };

    it('lets the NOTIFY of a partition committed here wait a moment for the commit, and reads the outcome when none comes', async () => {
      await withGrace(1_000, async (patient) => {
        commit(BASE, 6, 1, [0, randomUUID(), 'first']);
        const told = patient.outcomeOf(6, 1, 10_000);
        await apply(database, BASE, 6, 1, recorded('read'));
        // The notice is heard once the waiter knows the partition passed offset 1: it then answers
        // a new question about that offset from the table at once, while `told` waits for the commit.
        await poll(
          'the notice of offset 1 heard',
          async () => (await patient.outcomeOf(6, 1, 0)) !== 'timed-out',
          {
            everyMs: 10,
          },
        );
        commit(BASE, 6, 2, [1, randomUUID(), 'told']);
        expect(await told).toEqual(recorded('told'));
      });

      await withGrace(300, async (patient) => {
        const read = patient.outcomeOf(6, 2, 10_000);
        await apply(database, BASE, 6, 2, recorded('read'));
        expect(await read).toEqual(recorded('read'));
      });
    });

    it("ignores another version's commits, and hears none once closed", async () => {
      const other = local.outcomeOf(4, 0, 300);
      commit(V2, 4, 1, [0, randomUUID(), 'other version']);
      expect(await other).toBe('timed-out');
      await local.close();
      const heard: string[] = [];
      commits.subscribe(() => heard.push('heard'));
      commit(BASE, 4, 1, [0, randomUUID(), 'after close']);
      expect(heard).toEqual(['heard']);
      expect(await local.outcomeOf(4, 0, 200)).toBe('timed-out');
    });
  });

  it('answers timed-out to every waiting request when it closes', async () => {
    const waiting = [waiter.outcomeOf(0, 9, 30_000), waiter.outcomeOf(1, 9, 30_000)];
    await waiter.close();
    expect(await Promise.all(waiting)).toEqual(['timed-out', 'timed-out']);
  });
});
