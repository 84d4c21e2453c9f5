import { LOG_EVENT_VERSION, LogEvent } from '@castlog/domain';
import { LogBatch, LogRecord } from '@castlog/event-log';
import { Database, storedOffsets } from '@castlog/read-model';
import { openDatabaseAt } from '@castlog/runtime';
import { randomUUID } from 'node:crypto';
import { createTestDatabase } from '../../../test/support/databases';
import { applyBatch } from './apply-batch';

const PARTITIONS = 3;
const T0 = Date.UTC(2026, 10, 23);

/** One POST of one feed for `user`, at (partition, offset). */
const post = (user: string, partition: number, offset: number): LogRecord => {
  const value: LogEvent = {
    type: 'SubscriptionsAddRequested',
    userId: user,
    items: [
      { feedUrl: `https://feeds.example.com/${user}/${partition}/${offset}`, candidateGuid: randomUUID() },
    ],
  };
  return {
    key: user,
    type: value.type,
    version: LOG_EVENT_VERSION,
    eventId: randomUUID(),
    requestId: `r-${partition}-${offset}`,
    value,
    partition,
    offset,
    timestamp: T0 + offset,
  };
};

const batch = (partition: number, user: string, offsets: number[]): LogBatch => ({
  partition,
  records: offsets.map((offset) => post(user, partition, offset)),
});

describe('applyBatch over several partitions in one transaction', () => {
  let database: Database;
  const [alice, bob] = ['alice', 'bob'];
  beforeAll(async () => {
    database = await openDatabaseAt(await createTestDatabase('apply_batch'), 'castlog', 2);
  });
  afterAll(() => database?.close());

  const subscriptions = async (user: string): Promise<number> => {
    const [row] = await database.dataSource.query(
      `SELECT count(*)::int AS n FROM castlog.subscriptions WHERE user_id = $1`,
      [user],
    );
    return row.n;
  };

  it('applies each partition from its own stored offset, each record once, and answers per partition', async () => {
    const first = await applyBatch(
      database.dataSource,
      'castlog',
      [batch(2, bob, [0, 1]), batch(0, alice, [0, 1, 2])],
      PARTITIONS,
    );
    expect(first).toEqual([
      { partition: 0, applied: 3, nextOffset: 3, acceptedDeletions: [] },
      { partition: 2, applied: 2, nextOffset: 2, acceptedDeletions: [] },
    ]);

    // Redelivered and overlapping batches, one partition twice in the same call.
    const again = await applyBatch(
      database.dataSource,
      'castlog',
      [batch(0, alice, [1, 2, 3]), batch(2, bob, [0, 1]), batch(0, alice, [3, 4])],
      PARTITIONS,
    );
    expect(again).toEqual([
      { partition: 0, applied: 2, nextOffset: 5, acceptedDeletions: [] },
      { partition: 2, applied: 0, nextOffset: 2, acceptedDeletions: [] },
    ]);
    expect(await storedOffsets(database.dataSource, 'castlog')).toEqual(
      new Map([
        [0, 5],
        [2, 2],
      ]),
    );
    expect(await subscriptions(alice)).toBe(5);
    expect(await subscriptions(bob)).toBe(2);
    const outcomes = await database.dataSource.query(
      `SELECT partition, "offset" FROM castlog.request_outcomes ORDER BY partition, "offset"`,
    );
    expect(
      outcomes.map((row: { partition: number; offset: string }) => `${row.partition}:${row.offset}`),
    ).toEqual(['0:0', '0:1', '0:2', '0:3', '0:4', '2:0', '2:1']);
  });
});
