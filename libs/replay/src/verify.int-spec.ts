import { Database, OFFSETS_CHANNEL } from '@castlog/read-model';
import { openDatabaseAt } from '@castlog/runtime';
import { createTestDatabase } from '../../../test/support/databases';
import { timersLeftBy } from '../../../test/support/timers';
import { LiveOffsets } from './verify';

const SCHEMA = 'castlog';
const PARTITIONS = 2;

/** Partition 0 at `next`, partition 1 at 0. */
const offsets = (next: number) =>
  new Map([
    [0, next],
    [1, 0],
  ]);

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
    database = await openDatabaseAt(await createTestDatabase('live_offsets'), SCHEMA, 2);
  });
  beforeEach(async () => {
    await store(0, { notify: false });
    watcher = await LiveOffsets.watch(database.dataSource, SCHEMA, PARTITIONS);
  });
  afterEach(() => watcher.close());
  afterAll(() => database?.close());

  it('answers the live offsets at once when they stand at the target, leaving no timer running', async () => {
    // No notice pending, which would end the wait the call starts: only the call's own ending can.
    await store(5, { notify: false });
    expect(await timersLeftBy(() => watcher.reach(offsets(5), 60_000))).toEqual({
      value: offsets(5),
      pendingTimers: 0,
    });
  });

  it('answers as soon as the projector stores the target and says so, leaving no timer running', async () => {
    const reaching = timersLeftBy(() => watcher.reach(offsets(7), 60_000));
    await store(3);
    await store(7);
    expect(await reaching).toEqual({ value: offsets(7), pendingTimers: 0 });
  });

  it('answers offsets that passed the target, for the caller to catch up', async () => {
    await store(9, { notify: false });
    expect(await watcher.reach(offsets(7), 60_000)).toEqual(offsets(9));
  });

  it('fails when the live projection stays behind, naming where it stands, leaving no timer running', async () => {
    await store(2, { notify: false });
    const reached = await timersLeftBy(() => watcher.reach(offsets(7), 50));
    expect(reached.error?.message).toMatch(/stayed at 0:2 1:0 for 50 ms, behind the log's 0:7 1:0/);
    expect(reached.pendingTimers).toBe(0);
  });

  it('waits for the next notice no longer than asked, and not at all once its signal aborts', async () => {
    const timedOut = await timersLeftBy(() => watcher.nextNotice(20));
    expect(timedOut.pendingTimers).toBe(0);
    const stopped = new AbortController();
    const waiting = timersLeftBy(() => watcher.nextNotice(60_000, stopped.signal));
    stopped.abort();
    expect((await waiting).pendingTimers).toBe(0);
  });
});
