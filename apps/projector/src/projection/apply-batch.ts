import { decide, evolve, LogEvent, nextInstant, UserSubscriptions } from '@castlog/domain';
import { LogBatch, LogRecord, sequenceOf } from '@castlog/event-log';
import { DataSource } from 'typeorm';
import { OFFSETS_CHANNEL, OffsetNotice, quoteIdent, Sql } from '@castlog/read-model';
import { OutcomeRow, writeChanges, writeOutcomes } from './changes.sql';
import { keysOf, loadStates } from './state.loader';

export interface AppliedBatch {
  /** Records applied by this call (records the stored offset already covered are skipped). */
  readonly applied: number;
  readonly nextOffset: number;
  /** Deletions this batch accepted, for the deletion saga. */
  readonly acceptedDeletions: readonly { userId: string; deletionId: number }[];
}

/** Skips what the stored offset covers, decides every remaining record, and writes the read-model
 * changes, the request outcomes and the new offset in one transaction, so every event takes
 * effect exactly once however often the log redelivers it. */
export async function applyBatch(
  dataSource: DataSource,
  schema: string,
  batch: LogBatch,
  partitions: number,
): Promise<AppliedBatch> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    const sql: Sql = { query: (text, params) => runner.query(text, params) };
    const result = await applyInTransaction(sql, schema, batch, partitions);
    await runner.commitTransaction();
    return result;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    throw error;
  } finally {
    await runner.release();
  }
}

export async function applyInTransaction(
  sql: Sql,
  schema: string,
  batch: LogBatch,
  partitions: number,
): Promise<AppliedBatch> {
  const s = quoteIdent(schema);
  const lockOffset = () =>
    sql.query<{ next_offset: string }>(
      `SELECT next_offset FROM ${s}.projection_offsets WHERE partition = $1 FOR UPDATE`,
      [batch.partition],
    );
  // One round trip once the partition has its row (every batch but its first).
  let [stored] = await lockOffset();
  if (!stored) {
    await sql.query(
      `INSERT INTO ${s}.projection_offsets (partition, next_offset) VALUES ($1, 0) ON CONFLICT DO NOTHING`,
      [batch.partition],
    );
    [stored] = await lockOffset();
  }
  const from = Number(stored?.next_offset ?? 0);
  const records = batch.records.filter((record) => record.offset >= from);
  if (records.length === 0) return { applied: 0, nextOffset: from, acceptedDeletions: [] };

  const keys = keysOf(records.map((record) => record.value));
  const users = [...keys.users].sort();
  // Lock the users' clocks in a fixed order: the deletion saga takes the same locks.
  await sql.query(
    `INSERT INTO ${s}.user_clocks (user_id, last_instant) SELECT unnest($1::text[]), 0 ON CONFLICT DO NOTHING`,
    [users],
  );
  const clockRows = await sql.query<{ user_id: string; last_instant: string }>(
    `SELECT user_id, last_instant FROM ${s}.user_clocks WHERE user_id = ANY($1::text[]) ORDER BY user_id FOR UPDATE`,
    [users],
  );
  const clocks = new Map(clockRows.map((row) => [row.user_id, Number(row.last_instant)]));
  const states = await loadStates(sql, schema, keys, clocks);

  const changes = [];
  const outcomes: OutcomeRow[] = [];
  const acceptedDeletions: { userId: string; deletionId: number }[] = [];
  for (const record of records) {
    const event: LogEvent = record.value;
    let state = states.get(event.userId) as UserSubscriptions;
    const now = nextInstant(record.timestamp, state.lastInstant);
    const decision = decide(state, { event, sequence: sequenceOf(record, partitions) }, now);
    for (const change of decision.changes) state = evolve(state, change);
    states.set(event.userId, state);
    changes.push(...decision.changes);
    outcomes.push(outcomeRow(record, now, decision.outcome));
    if (
      decision.outcome.kind === 'DeletionAccepted' &&
      decision.changes.some((c) => c.kind === 'DeletionSaved' && c.deletion.status === 'PENDING')
    ) {
      acceptedDeletions.push({ userId: event.userId, deletionId: decision.outcome.deletionId });
    }
  }

  await writeChanges(sql, schema, changes);
  await writeOutcomes(sql, schema, outcomes);
  const nextOffset = (records[records.length - 1] as LogRecord).offset + 1;
  const notice: OffsetNotice = { schema, partition: batch.partition, next: nextOffset };
  // The new offset and its notice (sent at commit) in one statement.
  await sql.query(
    `WITH moved AS (UPDATE ${s}.projection_offsets SET next_offset = $2 WHERE partition = $1 RETURNING partition)
     SELECT pg_notify($3, $4) FROM moved`,
    [batch.partition, nextOffset, OFFSETS_CHANNEL, JSON.stringify(notice)],
  );
  return { applied: records.length, nextOffset, acceptedDeletions };
}

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
