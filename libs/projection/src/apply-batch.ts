import { BatchKeys, keysOf, LogEvent } from '@castlog/domain';
import { GroupCommit, LogBatch, LogRecord } from '@castlog/event-log';
import { DataSource } from 'typeorm';
import {
  bigints,
  inTransaction,
  ints,
  OFFSETS_CHANNEL,
  Param,
  quoteIdent,
  Sql,
  sqlLiteral,
  texts,
  TransactionSql,
  UserClocks,
} from '@castlog/read-model';
import { AppliedBatch, BatchPlan, pendingRecords, planBatch } from './batch-plan';
import { changeWrites, outcomeWrites, runWrites, Write, writeStatement } from './changes.sql';
import { loadStates, reachedSubscriptionsStatement, SubscriptionRow } from './state.loader';

/** Skips what the stored offsets cover, decides every remaining record, and writes the read-model
 * changes, the request outcomes and the new offsets in one transaction, so every event takes
 * effect exactly once however often the log redelivers it. Batches of several partitions go into
 * one transaction with the same statements as one batch: a user's events are all in one partition,
 * so partitions are independent. Answers one result per partition, in partition order. */
export async function applyBatch(
  dataSource: DataSource,
  schema: string,
  batches: LogBatch | readonly LogBatch[],
  partitions: number,
): Promise<AppliedBatch[]> {
  const { opening, readOf } = readWithLocks(schema, batches);
  return inTransaction(
    dataSource,
    (sql, opened) => applyInTransaction(sql, schema, batches, partitions, readOf(opened)),
    { opening },
  );
}

/** What `applyBatch` sends with BEGIN, in one round trip — both locks, then the state the batches
 * reach (of every user of the batches, a few of whom may have nothing left to apply) — and how it
 * reads their rows. */
export function readWithLocks(
  schema: string,
  batches: LogBatch | readonly LogBatch[],
): { opening: string[]; readOf: (opened: readonly Record<string, unknown>[][]) => ReadWithLocks } {
  const all = batchesOf(batches);
  const s = quoteIdent(schema);
  const partitionIds = [...new Set(all.map((batch) => batch.partition))].sort((a, b) => a - b);
  const keys = keysOf(all.flatMap((batch) => batch.records.map((record) => record.value)));
  return {
    opening: [
      lockOffsetsStatement(s, sqlLiteral(ints(partitionIds))),
      lockClocksStatement(s, sqlLiteral(texts([...keys.users].sort()))),
      reachedSubscriptionsStatement(schema, keys, sqlLiteral),
    ],
    readOf: ([offsets, clocks, reached]) => ({
      offsets: offsets as OffsetRow[],
      clocks: clocks as ClockRow[],
      reached: { keys, rows: reached as unknown as SubscriptionRow[] },
    }),
  };
}

const batchesOf = (batches: LogBatch | readonly LogBatch[]): readonly LogBatch[] =>
  Array.isArray(batches) ? (batches as readonly LogBatch[]) : [batches as LogBatch];

type OffsetRow = { partition: number; next_offset: string };
type ClockRow = { user_id: string; last_instant: string; sync_clock: string };

const lockOffsetsStatement = (s: string, partitions: string) =>
  `SELECT partition, next_offset FROM ${s}.projection_offsets
    WHERE partition = ANY(${partitions}) ORDER BY partition FOR UPDATE`;

const lockClocksStatement = (s: string, users: string) =>
  `SELECT user_id, last_instant, sync_clock FROM ${s}.user_clocks WHERE user_id = ANY(${users})
    ORDER BY user_id FOR UPDATE`;

/** What the caller read at the start of the transaction (`readWithLocks`): the rows the offsets'
 * and the clocks' locks answered (in that order) and, read after them, the subscriptions that
 * `keys` (those of every record handed over) reach. */
export interface ReadWithLocks {
  readonly offsets: readonly OffsetRow[];
  readonly clocks: readonly ClockRow[];
  readonly reached: { readonly keys: BatchKeys; readonly rows: readonly SubscriptionRow[] };
}

/** `applyBatch` in a transaction of the caller's, which its last statement commits when there is
 * anything to write and the write is small (`LITERAL_WRITE_ROWS`: the write and COMMIT in one
 * round trip); else the caller commits. `read`: what the caller read with the locks, when it took
 * them; else everything is read here. Reading and locking are this function's; what the records
 * make of the state is `planBatch`'s, without the database, and the write is `writePlan`'s. */
export async function applyInTransaction(
  sql: TransactionSql,
  schema: string,
  batches: LogBatch | readonly LogBatch[],
  partitions: number,
  read?: ReadWithLocks,
): Promise<AppliedBatch[]> {
  const s = quoteIdent(schema);
  const all = batchesOf(batches);
  const partitionIds = [...new Set(all.map((batch) => batch.partition))].sort((a, b) => a - b);
  const pending = pendingRecords(all, await lockOffsets(sql, s, partitionIds, read?.offsets));
  const reused = await reusedPositions(sql, s, pending.redelivered);
  if (pending.records.length === 0) return [...planBatch(pending, new Map(), partitions, reused).results];

  const keys = read?.reached.keys ?? keysOf(pending.records.map((record) => record.value));
  const users = [...keys.users].sort();
  const { clocks, raced } = await lockClocks(sql, s, users, read?.clocks);
  // The state read with the locks is current: a user's state changes only under the lock of the
  // user's clock row, which the read waited for. Unless a transaction created a user's row after
  // that (the user was new to both): then the state is read again.
  const states = await loadStates(sql, schema, keys, clocks, raced ? undefined : read?.reached.rows);
  const plan = planBatch(pending, states, partitions, reused);
  await writePlan(sql, schema, plan, rowsOfRecords(pending.records));
  return [...plan.results];
}

/** Locks the partitions' offset rows and reads them, creating the missing ones. One round trip
 * once the partitions have their rows (every batch but their first); none when the caller locked
 * them (`locked`, the rows its lock answered). */
async function lockOffsets(
  sql: Sql,
  s: string,
  partitionIds: readonly number[],
  locked?: readonly OffsetRow[],
): Promise<Map<number, number>> {
  const lock = async () => sql.query<OffsetRow>(lockOffsetsStatement(s, '$1::int[]'), [partitionIds]);
  const stored = (rows: readonly OffsetRow[]) =>
    new Map(rows.map((row) => [row.partition, Number(row.next_offset)]));
  const offsets = stored(locked ?? (await lock()));
  if (offsets.size === partitionIds.length) return offsets;
  await sql.query(
    `INSERT INTO ${s}.projection_offsets (partition, next_offset)
     SELECT unnest($1::int[]), 0 ON CONFLICT DO NOTHING`,
    [partitionIds],
  );
  return stored(await lock());
}

/** The plan's changes, its outcomes, the new offsets and their notices (sent at commit), in one
 * statement; with COMMIT in the same round trip when the write is small (`rows`, at most
 * LITERAL_WRITE_ROWS). */
async function writePlan(sql: TransactionSql, schema: string, plan: BatchPlan, rows: number): Promise<void> {
  const s = quoteIdent(schema);
  const moved = plan.results.filter((result) => result.applied > 0);
  const writes: Write[] = [
    ...changeWrites(schema, plan.changes),
    ...outcomeWrites(schema, plan.outcomes),
    {
      name: 'offsets_moved',
      text: (p: Param) => `
        UPDATE ${s}.projection_offsets o SET next_offset = m.next
          FROM unnest(${p(ints(moved.map((r) => r.partition)))}, ${p(bigints(moved.map((r) => r.nextOffset)))})
               AS m(partition, next)
         WHERE o.partition = m.partition
        RETURNING o.partition, o.next_offset`,
    },
  ];
  const notices = (p: Param) => `
    SELECT pg_notify(${p(OFFSETS_CHANNEL)}, json_build_object('schema', ${p(schema)}::text, 'partition', partition,
                                                               'next', next_offset)::text)
      FROM offsets_moved`;
  if (rows <= LITERAL_WRITE_ROWS) await sql.queryAndCommit(writeStatement(writes, sqlLiteral, notices));
  else await runWrites(sql, writes, notices);
}

/** The rows (`rowsOf`) up to which a transaction's write goes with COMMIT in one round trip, its
 * values as literals. Past it the write takes parameters and COMMIT goes alone: PostgreSQL reads a
 * large write's values faster as parameters, and one round trip is little beside such a write
 * (measured in docs/performance.md). */
export const LITERAL_WRITE_ROWS = 200;

/** Transactions of one projection in flight at once: PostgreSQL writes one batch while the next
 * is decided. Each holds a pooled connection: the pools of the projector and of a replay are sized
 * from it (`projectorConnections`, `REPLAY_CONNECTIONS`). */
export const PARALLEL_TRANSACTIONS = 4;

/** The rows a transaction of batches handed over together is meant to write: past it, the batches
 * go into several transactions, which run at once. Small requests share one transaction; large
 * ones spread over several. */
export const TRANSACTION_ROWS = 1000;

/** About the rows an event writes: one per feed of an add or an upload, one per episode action,
 * one per action of a sync request, else one. */
export const rowsOf = (event: LogEvent): number => {
  switch (event.type) {
    case 'SubscriptionsAddRequested':
      return Math.max(1, event.items.length);
    case 'GpodderUploadRequested':
      return Math.max(1, event.add.length + event.remove.length);
    case 'EpisodeActionsUploaded':
    case 'SyncActionsPosted':
      return Math.max(1, event.actions.length);
    default:
      return 1;
  }
};

const rowsOfRecords = (records: readonly LogRecord[]): number =>
  records.reduce((rows, record) => rows + rowsOf(record.value), 0);

/** How the projector feeds `apply` (one transaction per call): the batches the log hands over
 * together — several partitions at once — go into transactions of up to TRANSACTION_ROWS rows
 * (`rowsOf`; a batch larger than that alone) and at most `maxEvents` events, with up to
 * PARALLEL_TRANSACTIONS in flight. Partitions in flight are disjoint (the log hands over one batch
 * of a partition at a time), and so are their users: concurrent transactions never conflict. */
export const batchTransactions = (
  apply: (batches: LogBatch[]) => Promise<AppliedBatch[]>,
  maxEvents: number,
): GroupCommit<LogBatch, AppliedBatch> =>
  new GroupCommit(apply, {
    maxItems: Number.MAX_SAFE_INTEGER,
    // An event writes at least one row, so a transaction of at most `maxEvents` rows holds at most
    // `maxEvents` events.
    maxBytes: Math.min(maxEvents, TRANSACTION_ROWS),
    sizeOf: (batch) => rowsOfRecords(batch.records),
    maxInFlight: PARALLEL_TRANSACTIONS,
    gatherTurn: true,
  });

/** Redelivered records whose position holds, in the read model, the outcome of another event. A log
 * hands an applied record over again only as itself, unless it lost records it had acknowledged and
 * gave their offsets to new events (a broker that restarted uncleanly, without replicas). Those new
 * events are not applied — the stored offset is past them — and the read model no longer follows
 * the log: the caller reports it. One query, only when something was redelivered. */
async function reusedPositions(sql: Sql, s: string, redelivered: readonly LogRecord[]): Promise<LogRecord[]> {
  if (redelivered.length === 0) return [];
  const applied = await sql.query<{ partition: number; offset: string; event_id: string }>(
    `SELECT o.partition, o."offset", o.event_id FROM ${s}.request_outcomes o
       JOIN unnest($1::int[], $2::bigint[]) AS k(partition, "offset")
         ON o.partition = k.partition AND o."offset" = k."offset"`,
    [redelivered.map((record) => record.partition), redelivered.map((record) => record.offset)],
  );
  const eventAt = new Map(applied.map((row) => [`${row.partition}:${row.offset}`, row.event_id]));
  return redelivered.filter((record) => {
    const eventId = eventAt.get(`${record.partition}:${record.offset}`);
    return eventId !== undefined && eventId !== record.eventId;
  });
}

/** Locks the users' clock rows (the deletion saga takes the same lock) and reads them, creating the
 * missing ones. Users seen before cost one `SELECT … FOR UPDATE` (none when the caller locked these
 * same users: `locked`, the rows its lock answered), which writes nothing: the clock row is written
 * once per batch, by the batch's own `ClockAdvanced`. */
async function lockClocks(
  sql: Sql,
  s: string,
  users: readonly string[],
  locked?: readonly ClockRow[],
): Promise<{ clocks: Map<string, UserClocks>; raced: boolean }> {
  const lock = (ids: readonly string[]) => sql.query<ClockRow>(lockClocksStatement(s, '$1::text[]'), [ids]);
  const clocksOf = (row: ClockRow): UserClocks => ({
    lastInstant: Number(row.last_instant),
    syncClock: Number(row.sync_clock),
  });
  const clocks = new Map((locked ?? (await lock(users))).map((row) => [row.user_id, clocksOf(row)]));
  const missing = users.filter((userId) => !clocks.has(userId));
  if (missing.length > 0) {
    // A new row is locked by its insert; one a concurrent transaction inserted first is locked by
    // the second SELECT (transactions of one projection never share users, so that is a saga).
    const inserted = await sql.query<ClockRow>(
      `INSERT INTO ${s}.user_clocks (user_id, last_instant) SELECT unnest($1::text[]), 0
       ON CONFLICT (user_id) DO NOTHING RETURNING user_id, last_instant, sync_clock`,
      [missing],
    );
    for (const row of inserted) clocks.set(row.user_id, clocksOf(row));
    const raced = missing.filter((userId) => !clocks.has(userId));
    if (raced.length > 0) {
      for (const row of await lock(raced)) clocks.set(row.user_id, clocksOf(row));
      return { clocks, raced: true };
    }
  }
  return { clocks, raced: false };
}
