import { Change, decide, Draft, LogEvent, nextInstant, UserSubscriptions } from '@castlog/domain';
import { LogBatch, LogRecord, sequenceOf } from '@castlog/event-log';
import { CommittedOutcome } from '@castlog/read-model';
import { OutcomeRow } from './changes.sql';

export interface AppliedBatch {
  readonly partition: number;
  /** Records applied by this call (records the stored offset already covered are skipped). */
  readonly applied: number;
  readonly nextOffset: number;
  /** Deletions this batch accepted, for the deletion saga. */
  readonly acceptedDeletions: readonly { userId: string; deletionId: number }[];
  /** Offsets already applied at which the log now holds another event than the one applied there:
   * the log lost records it had acknowledged and gave their offsets to new ones, which the stored
   * offset skips (see reusedPositions). */
  readonly reusedOffsets: readonly number[];
  /** The outcomes this call stored, of the records it applied, in offset order. */
  readonly outcomes: readonly CommittedOutcome[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer E)[] ? E[] : T[K] };

/** Which records of the batches a transaction applies, told by the stored offsets alone. */
export interface PendingRecords {
  /** The partitions of the batches, in order. */
  readonly partitions: readonly number[];
  /** Each partition's records past its stored offset, each offset once, partition by partition. */
  readonly records: readonly LogRecord[];
  /** Records the stored offsets cover: applied before, handed over again. */
  readonly redelivered: readonly LogRecord[];
  /** Each partition's stored offset once `records` are applied. */
  readonly next: ReadonlyMap<number, number>;
}

/** The records of `batches` (several may share a partition) that the stored offsets (`stored`,
 * none meaning 0) do not cover. */
export function pendingRecords(
  batches: readonly LogBatch[],
  stored: ReadonlyMap<number, number>,
): PendingRecords {
  const byPartition = new Map<number, LogRecord[]>();
  for (const batch of batches) {
    const records = byPartition.get(batch.partition);
    if (records) records.push(...batch.records);
    else byPartition.set(batch.partition, [...batch.records]);
  }
  const partitions = [...byPartition.keys()].sort((a, b) => a - b);
  const records: LogRecord[] = [];
  const redelivered: LogRecord[] = [];
  const next = new Map<number, number>();
  for (const partition of partitions) {
    const from = stored.get(partition) ?? 0;
    let expected = from;
    for (const record of byPartition.get(partition) ?? []) {
      if (record.offset < expected) {
        if (record.offset < from) redelivered.push(record);
        continue;
      }
      records.push(record);
      expected = record.offset + 1;
    }
    next.set(partition, expected);
  }
  return { partitions, records, redelivered, next };
}

/** What a transaction writes: the read-model changes, the outcomes, and each partition's result
 * (the partitions that moved have `applied` > 0). */
export interface BatchPlan {
  readonly changes: readonly Change[];
  readonly outcomes: readonly OutcomeRow[];
  readonly results: readonly AppliedBatch[];
}

/** Decides every pending record in log order against its user's state (`states`, every user of the
 * records), each decision's changes applied to a draft of that state before the next record of the
 * user is decided. `reused`: the redelivered records whose position holds another event. */
export function planBatch(
  pending: PendingRecords,
  states: ReadonlyMap<string, UserSubscriptions>,
  partitions: number,
  reused: readonly LogRecord[] = [],
): BatchPlan {
  const results = new Map<number, Mutable<AppliedBatch>>(
    pending.partitions.map((partition) => [partition, emptyResult(partition, pending.next)]),
  );
  for (const { partition, offset } of reused) results.get(partition)?.reusedOffsets.push(offset);
  const drafts = new Map([...states].map(([userId, state]) => [userId, new Draft(state)]));
  const changes: Change[] = [];
  const outcomes: OutcomeRow[] = [];
  for (const record of pending.records) {
    const event: LogEvent = record.value;
    const draft = drafts.get(event.userId) as Draft;
    const state = draft.state;
    const now = nextInstant(record.timestamp, state.lastInstant);
    const decision = decide(state, { event, sequence: sequenceOf(record, partitions) }, now);
    draft.apply(decision.changes);
    changes.push(...decision.changes);
    const outcome = outcomeRow(record, now, decision.outcome);
    outcomes.push(outcome);
    const result = results.get(record.partition) as Mutable<AppliedBatch>;
    result.applied += 1;
    result.outcomes.push(outcome);
    if (
      decision.outcome.kind === 'DeletionAccepted' &&
      decision.changes.some((c) => c.kind === 'DeletionSaved' && c.deletion.status === 'PENDING')
    ) {
      result.acceptedDeletions.push({ userId: event.userId, deletionId: decision.outcome.deletionId });
    }
  }
  return { changes, outcomes, results: [...results.values()] };
}

const emptyResult = (partition: number, next: ReadonlyMap<number, number>): Mutable<AppliedBatch> => ({
  partition,
  applied: 0,
  nextOffset: next.get(partition) ?? 0,
  acceptedDeletions: [],
  reusedOffsets: [],
  outcomes: [],
});

const outcomeRow = (record: LogRecord, instant: number, outcome: OutcomeRow['outcome']): OutcomeRow => ({
  partition: record.partition,
  offset: record.offset,
  userId: record.value.userId,
  eventId: record.eventId,
  requestId: record.requestId,
  eventType: record.type,
  instant,
  outcome,
});
