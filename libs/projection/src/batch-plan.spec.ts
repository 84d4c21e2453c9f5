import { initialState, LOG_EVENT_VERSION, LogEvent } from '@castlog/domain';
import { LogBatch, LogRecord } from '@castlog/event-log';
import { pendingRecords, planBatch } from './batch-plan';

const PARTITIONS = 2;
const ALICE = 'alice';
const GUID = '11111111-1111-4111-8111-111111111111';

const record = (partition: number, offset: number, value: LogEvent): LogRecord => ({
  partition,
  offset,
  timestamp: 1_000 + offset,
  key: value.userId,
  type: value.type,
  version: LOG_EVENT_VERSION,
  eventId: `event-${partition}-${offset}`,
  requestId: `request-${partition}-${offset}`,
  value,
});

const add = (userId: string, guid = GUID): LogEvent => ({
  type: 'SubscriptionsAddRequested',
  userId,
  items: [{ feedUrl: 'https://feeds.example/a', candidateGuid: guid }],
});

const batch = (partition: number, offsets: readonly number[], userId = ALICE): LogBatch => ({
  partition,
  records: offsets.map((offset) => record(partition, offset, add(userId))),
});

const offsetsOf = (records: readonly LogRecord[]) => records.map((r) => `${r.partition}:${r.offset}`);

describe('pendingRecords: what the stored offsets leave to apply', () => {
  it('skips what they cover, partition by partition, and says where each partition gets to', () => {
    const pending = pendingRecords([batch(1, [0, 1]), batch(0, [3, 4, 5, 6])], new Map([[0, 5]]));
    expect(pending.partitions).toEqual([0, 1]);
    expect(offsetsOf(pending.records)).toEqual(['0:5', '0:6', '1:0', '1:1']);
    expect(offsetsOf(pending.redelivered)).toEqual(['0:3', '0:4']);
    expect(pending.next).toEqual(
      new Map([
        [0, 7],
        [1, 2],
      ]),
    );
  });

  it('applies an offset handed over twice in one call once, and does not count it redelivered', () => {
    const pending = pendingRecords([batch(0, [5, 6]), batch(0, [6, 7])], new Map([[0, 5]]));
    expect(offsetsOf(pending.records)).toEqual(['0:5', '0:6', '0:7']);
    expect(pending.redelivered).toEqual([]);
    expect(pending.next).toEqual(new Map([[0, 8]]));
  });
});

describe('planBatch: what the records make of the state, without the database', () => {
  it("decides each record against the state its user's earlier records left", () => {
    const pending = pendingRecords(
      [
        {
          partition: 0,
          records: [
            record(0, 0, add(ALICE)),
            record(0, 1, { type: 'DeletionRequested', userId: ALICE, guid: GUID }),
          ],
        },
      ],
      new Map(),
    );
    const plan = planBatch(pending, new Map([[ALICE, initialState(ALICE)]]), PARTITIONS);
    expect(plan.outcomes.map((o) => [o.offset, o.outcome.kind])).toEqual([
      [0, 'Added'],
      [1, 'DeletionAccepted'],
    ]);
    expect(plan.outcomes[0]).toMatchObject({ userId: ALICE, eventId: 'event-0-0', requestId: 'request-0-0' });
    expect(plan.changes.map((c) => c.kind)).toContain('SubscriptionSaved');
    expect(plan.changes.map((c) => c.kind)).toContain('DeletionSaved');
    const [result] = plan.results;
    expect(result).toMatchObject({ partition: 0, applied: 2, nextOffset: 2, reusedOffsets: [] });
    expect(result?.outcomes).toEqual(plan.outcomes);
    expect(result?.acceptedDeletions).toEqual([{ userId: ALICE, deletionId: expect.any(Number) }]);
  });

  it('answers every partition handed over, those with nothing to apply and the reused offsets too', () => {
    const pending = pendingRecords([batch(0, [0, 1]), batch(1, [0], 'bob')], new Map([[0, 2]]));
    const plan = planBatch(pending, new Map([['bob', initialState('bob')]]), PARTITIONS, [
      record(0, 1, add(ALICE)),
    ]);
    expect(
      plan.results.map(({ partition, applied, nextOffset, reusedOffsets }) => ({
        partition,
        applied,
        nextOffset,
        reusedOffsets,
      })),
    ).toEqual([
      { partition: 0, applied: 0, nextOffset: 2, reusedOffsets: [1] },
      { partition: 1, applied: 1, nextOffset: 1, reusedOffsets: [] },
    ]);
  });

  it("gives each event an instant past its user's last, however the log stamped it", () => {
    const pending = pendingRecords([batch(0, [0, 1])], new Map());
    const plan = planBatch(pending, new Map([[ALICE, initialState(ALICE, 5_000)]]), PARTITIONS);
    const [first, second] = plan.outcomes.map((o) => o.instant);
    expect(first).toBeGreaterThan(5_000);
    expect(second).toBeGreaterThan(first!);
  });
});
