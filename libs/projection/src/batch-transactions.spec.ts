import { LogEvent } from '@castlog/domain';
import { LogBatch, LogRecord } from '@castlog/event-log';
import { batchTransactions, rowsOf, TRANSACTION_ROWS } from './apply-batch';
import { AppliedBatch } from './batch-plan';

const add = (feeds: number): LogEvent => ({
  type: 'SubscriptionsAddRequested',
  userId: 'user-1',
  items: Array.from({ length: feeds }, (_, i) => ({
    feedUrl: `https://feeds.example/${i}`,
    candidateGuid: '11111111-1111-4111-8111-111111111111',
  })),
});

const batch = (partition: number, events: readonly LogEvent[]): LogBatch => ({
  partition,
  records: events.map((value, offset) => ({ partition, offset, value }) as unknown as LogRecord),
});

/** The transactions `batchTransactions` makes of batches submitted together: their partitions. */
async function transactionsOf(batches: readonly LogBatch[], maxEvents = 2000): Promise<number[][]> {
  const made: number[][] = [];
  const transactions = batchTransactions(async (gathered) => {
    made.push(gathered.map((b) => b.partition));
    return gathered.map((b): AppliedBatch => ({
      partition: b.partition,
      applied: b.records.length,
      nextOffset: b.records.length,
      acceptedDeletions: [],
      reusedOffsets: [],
      outcomes: [],
    }));
  }, maxEvents);
  await Promise.all(batches.map((b) => transactions.submit([b])));
  return made;
}

describe('batchTransactions: what the log hands over together, as transactions', () => {
  it('weighs an event by the rows it writes: its feeds, its episode actions, its sync actions, else one', () => {
    expect(rowsOf(add(100))).toBe(100);
    expect(rowsOf(add(0))).toBe(1);
    const sync = (actions: number): LogEvent => ({
      type: 'SyncActionsPosted',
      userId: 'user-1',
      clientId: '11111111-1111-4111-8111-111111111111',
      actions: Array.from({ length: actions }, () => ({ type: 'subscription' })),
    });
    expect(rowsOf(sync(30))).toBe(30);
    expect(rowsOf(sync(1))).toBe(1);
    expect(rowsOf({ type: 'DeletionRequested', userId: 'u', guid: 'g' } as LogEvent)).toBe(1);
  });

  it('puts requests of one feed from every partition into one transaction', async () =>
    expect(await transactionsOf([0, 1, 2, 3, 4, 5].map((p) => batch(p, [add(1), add(1), add(1)])))).toEqual([
      [0, 1, 2, 3, 4, 5],
    ]));

  it('splits large requests over several transactions of about TRANSACTION_ROWS rows, run at once', async () => {
    const made = await transactionsOf(
      Array.from({ length: 16 }, (_, p) => batch(p, [add(TRANSACTION_ROWS / 4)])),
    );
    expect(made).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9, 10, 11],
      [12, 13, 14, 15],
    ]);
  });

  it('gives a batch larger than that a transaction of its own, and keeps to maxEvents', async () => {
    expect(await transactionsOf([batch(0, [add(TRANSACTION_ROWS + 1)]), batch(1, [add(1)])])).toEqual([
      [0],
      [1],
    ]);
    expect(
      await transactionsOf(
        [0, 1, 2].map((p) => batch(p, [add(1), add(1)])),
        4,
      ),
    ).toEqual([[0, 1], [2]]);
  });
});
