import { Database, OFFSETS_CHANNEL } from '@castlog/read-model';
import { openDatabaseAt } from '@castlog/runtime';
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { createTestDatabase } from '../../../test/support/databases';
import { LiveOffsets } from './verify';

const SCHEMA = 'castlog';
const PARTITIONS = 2;

/** Timers started by work run in `timersOf.track`, while they are pending (not yet fired or cleared). */
const timersOf = (() => {
  const tracked = new AsyncLocalStorage<true>();
  const pending = new Set<number>();
  const hook = createHook({
    init: (id, type) => {
      if (type === 'Timeout' && tracked.getStore()) pending.add(id);
    },
    destroy: (id) => pending.delete(id),
  });
  return {
    hook,
    /** Runs `work`, and answers its outcome with how many of the timers it started are still pending. */
    track: async <T>(work: () => Promise<T>) => {
      pending.clear();
      const outcome = await tracked.run(true, work).then(
        (value) => ({ value, error: undefined }),
        (error: Error) => ({ value: undefined, error }),
      );
      // Destroy hooks run after the current tick.
      await new Promise((resolve) => setImmediate(resolve));
      return { ...outcome, pendingTimers: pending.size };
    },
  };
})();

describe('LiveOffsets: waiting for the live projection to reach the replay', () => {
  let database: Database;
  let watcher: LiveOffsets;

  /** Stores `next` as partition 0's offset and, unless told not to, tells the watcher, as the
   * projector's commit does. */
  const store = async (next: number, { notify = true } = {}) => {
    await database.dataSource.query(
      `INSERT INTO ${SCHEMA}.projection_offsets (partition, next_offset) VALUES (0, $1)
         ON CONFLICT (partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`,
      [next],
    );
    if (notify) await database.dataSource.query(`SELECT pg_notify($1, '{}')`, [OFFSETS_CHANNEL]);
  };

  beforeAll(async () => {
    timersOf.hook.enable();
    database = await openDatabaseAt(await createTestDatabase('live_offsets'), SCHEMA, 2);
  });
  beforeEach(async () => {
    await store(0, { notify: false });
    watcher = await LiveOffsets.watch(database.dataSource, SCHEMA, PARTITIONS);
  });
  afterEach(() => watcher.close());
  afterAll(async () => {
    timersOf.hook.disable();
    await database?.close();
  });

  it('answers the live offsets at once when they stand at the target, leaving no timer running', async () => {
    // No notice pending, which would end the wait the call starts: only the call's own ending can.
    await store(5, { notify: false });
    const reached = await timersOf.track(() =>
      watcher.reach(
        new Map([
          [0, 5],
          [1, 0],
        ]),
        60_000,
      ),
    );
    expect(reached).toEqual({
      value: new Map([
        [0, 5],
        [1, 0],
      ]),
      error: undefined,
      pendingTimers: 0,
    });
  });

  it('answers as soon as the projector stores the target and says so, leaving no timer running', async () => {
    const reaching = timersOf.track(() =>
      watcher.reach(
        new Map([
          [0, 7],
          [1, 0],
        ]),
        60_000,
      ),
    );
    await store(3);
    await store(7);
    expect(await reaching).toEqual({
      value: new Map([
        [0, 7],
        [1, 0],
      ]),
      error: undefined,
      pendingTimers: 0,
    });
  });

  it('answers offsets that passed the target, for the caller to catch up', async () => {
    await store(9, { notify: false });
    expect(
      await watcher.reach(
        new Map([
          [0, 7],
          [1, 0],
        ]),
        60_000,
      ),
    ).toEqual(
      new Map([
        [0, 9],
        [1, 0],
      ]),
    );
  });

  it('fails when the live projection stays behind, naming where it stands, leaving no timer running', async () => {
    await store(2, { notify: false });
    const reached = await timersOf.track(() =>
      watcher.reach(
        new Map([
          [0, 7],
          [1, 0],
        ]),
        50,
      ),
    );
    expect(reached.error?.message).toMatch(/stayed at 0:2 1:0 for 50 ms, behind the log's 0:7 1:0/);
    expect(reached.pendingTimers).toBe(0);
  });

  it('waits for the next notice no longer than asked, and not at all once its signal aborts', async () => {
    const timedOut = await timersOf.track(() => watcher.nextNotice(20));
    expect(timedOut.pendingTimers).toBe(0);
    const stopped = new AbortController();
    const waiting = timersOf.track(() => watcher.nextNotice(60_000, stopped.signal));
    stopped.abort();
    expect((await waiting).pendingTimers).toBe(0);
  });
});
