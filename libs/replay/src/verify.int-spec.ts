import { Database, OffsetWatch, Sql } from '@castlog/read-model';
import { openDatabaseAt } from '@castlog/runtime';
import { Client } from 'pg';
import { storeOffsets } from '../../read-model/src/testing/read-model-database';
import { createTestDatabase } from '../../../test/support/databases';
import { timersLeftBy } from '../../../test/support/timers';
import { COMPARED_TABLES, NOT_COMPARED, reachLive } from './verify';

const SCHEMA = 'castlog';

/** Partition 0 at `next`, partition 1 at 0. */
const offsets = (next: number) =>
  new Map([
    [0, next],
    [1, 0],
  ]);

describe('the live offsets: waiting for the live projection to reach the replay', () => {
  let database: Database;
  let watcher: OffsetWatch;
  /** The watch reads on a connection of its own: a pool's idle timers would count as the wait's. */
  let reader: Client;

  /** Stores `next` as partition 0's offset and, unless told not to, tells the watcher, as the
   * projector's commit does. */
  const store = (next: number, { notify = true } = {}) =>
    storeOffsets(database.dataSource, SCHEMA, { 0: next }, { notify });
  const reach = (target: Map<number, number>, timeoutMs: number) =>
    reachLive(watcher, SCHEMA, target, timeoutMs);

  beforeAll(async () => {
    database = await openDatabaseAt(await createTestDatabase('live_offsets'), SCHEMA, 2);
    reader = new Client({ connectionString: database.url });
    await reader.connect();
  });
  beforeEach(async () => {
    await store(0, { notify: false });
    const sql: Sql = { query: async (text, params) => (await reader.query(text, params)).rows };
    watcher = new OffsetWatch(database.url, sql, { component: 'live offsets', schema: () => SCHEMA });
    await watcher.start();
  });
  afterEach(() => watcher.close());
  afterAll(async () => {
    await reader?.end();
    await database?.close();
  });

  it('answers the live offsets at once when they stand at the target, leaving no timer running', async () => {
    // No notice pending, which would end the wait the call starts: only the call's own ending can.
    await store(5, { notify: false });
    expect(await timersLeftBy(() => reach(offsets(5), 60_000))).toEqual({
      value: offsets(5),
      pendingTimers: 0,
    });
  });

  it('answers as soon as the projector stores the target and says so, leaving no timer running', async () => {
    const reaching = timersLeftBy(() => reach(offsets(7), 60_000));
    await store(3);
    await store(7);
    expect(await reaching).toEqual({ value: offsets(7), pendingTimers: 0 });
  });

  it('answers offsets that passed the target, for the caller to catch up', async () => {
    await store(9, { notify: false });
    expect(await reach(offsets(7), 60_000)).toEqual(offsets(9));
  });

  it('fails when the live projection stays behind, naming where it stands, leaving no timer running', async () => {
    await store(2, { notify: false });
    const reached = await timersLeftBy(() => reach(offsets(7), 50));
    expect(reached.error?.message).toMatch(/stayed at 0:2 1:0 for 50 ms, behind the log's 0:7 1:0/);
    expect(reached.pendingTimers).toBe(0);
  });

  it('waits for the next stored offset no longer than asked, leaving no timer running', async () => {
    const timedOut = await timersLeftBy(() => watcher.nextAdvance(20));
    expect(timedOut.pendingTimers).toBe(0);
    const waiting = timersLeftBy(() => watcher.nextAdvance(60_000));
    await store(4);
    expect((await waiting).pendingTimers).toBe(0);
  });
});

describe('the comparison covers the read model', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabaseAt(await createTestDatabase('compared_tables'), SCHEMA, 2);
  });
  afterAll(() => database?.close());

  it('compares every table and view the read-model migrations make, or one it is stored in, but those it leaves out', async () => {
    const made: { name: string }[] = await database.dataSource.query(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1`,
      [SCHEMA],
    );
    const covered = new Set([
      ...COMPARED_TABLES.flatMap(({ table, storedIn }) => [table, ...(storedIn ?? [])]),
      ...NOT_COMPARED,
    ]);
    expect(made.map(({ name }) => name).filter((name) => !covered.has(name))).toEqual([]);
    expect([...covered].filter((name) => !made.some((table) => table.name === name))).toEqual([]);
  });
});
