import { configSchema } from '@castlog/config';
import { EventLog, LogBatch } from '@castlog/event-log';
// The projector's own apply path: a replay must apply the log exactly as the live projector does.
import { applyBatch, batchTransactions, PARALLEL_TRANSACTIONS } from '@castlog/projection';
import { quoteIdent, READER_INDEXES, readModelMigrations, storedOffsets } from '@castlog/read-model';
import { isUnavailableError, retry } from '@castlog/supervision';
import { DataSource } from 'typeorm';

/** The live projection's schema when none is named: READ_MODEL_SCHEMA's default. */
export const DEFAULT_LIVE_SCHEMA: string = configSchema.shape.READ_MODEL_SCHEMA.parse(undefined);

/** Records per transaction at most: the live projector's default PROJECTOR_BATCH_SIZE. */
const REPLAY_BATCH_SIZE: number = configSchema.shape.PROJECTOR_BATCH_SIZE.parse(undefined);

/** Schemas a replay must never drop, whatever they hold. */
const PROTECTED_SCHEMAS = /^(public|information_schema|pg_.*|castlog_auth|castlog_log|castlog_projections)$/;

/** The comment a replay puts on the schema it builds: only a schema that carries it (or none at
 * all) may be dropped by the next replay. */
const SCRATCH_COMMENT = 'castlog replay scratch: rebuilt from the log by castlog replay';

/** Connections a replay holds at once at most: its lock's, the live projection's offsets' listener
 * (when it verifies) and its transactions in flight. A pool of fewer makes a transaction wait for a
 * connection that only another transaction of the replay frees, and the wait fails after the
 * pool's connect timeout. */
export const REPLAY_CONNECTIONS = PARALLEL_TRANSACTIONS + 2;

/** How long a replay waits for a dependency that stays out of reach before it gives up. */
export const OUTAGE_LIMIT_MS = 5 * 60_000;

export type ReplayProgress = (done: number, total: number) => void;

export interface ReplayOptions {
  readonly dataSource: DataSource;
  readonly eventLog: EventLog;
  /** The scratch schema: dropped and rebuilt. */
  readonly schema: string;
  readonly onProgress?: ReplayProgress;
  /** Told of each failure a replay rides out (`rideOut`), with the wait before it tries again. */
  readonly onOutage?: (error: unknown, retryInMs: number) => void;
}

/** A partition's next offset for every partition of the log (0 where nothing is stored). */
export type Offsets = Map<number, number>;

/** Rebuilds the read model from offset 0 into `schema`: drops it, creates its tables with the
 * read-model migration (run directly, not recorded in the migrations table) as unlogged tables,
 * then applies every record of the log through `applyBatch`, the live projector's own code path, so
 * the result is a function of the log alone, and builds the indexes only readers use
 * (`READER_INDEXES`) last. Answers the offsets reached. */
export async function replayInto(options: ReplayOptions): Promise<Offsets> {
  const { dataSource, schema } = options;
  // One replay into a schema at a time: a second would drop the tables the first is filling.
  const guard = dataSource.createQueryRunner();
  await guard.connect();
  try {
    const [lock] = await guard.query(`SELECT pg_try_advisory_lock(hashtext($1)) AS taken`, [
      `castlog replay ${schema}`,
    ]);
    if (lock?.taken !== true) throw new Error(`another replay into schema ${schema} is running`);
    try {
      return await replayLocked(options);
    } finally {
      // A connection lost meanwhile took its lock with it.
      await guard
        .query(`SELECT pg_advisory_unlock(hashtext($1))`, [`castlog replay ${schema}`])
        .catch(() => undefined);
    }
  } finally {
    await guard.release();
  }
}

async function replayLocked(options: ReplayOptions): Promise<Offsets> {
  const { dataSource, schema } = options;
  if (PROTECTED_SCHEMAS.test(schema) || (await isMigrated(dataSource, schema))) {
    throw new Error(`refusing to replay into schema ${schema}: it is not a scratch schema`);
  }
  if (!(await isScratchOrAbsent(dataSource, schema))) {
    throw new Error(
      `refusing to replay into schema ${schema}: it exists and no replay made it (drop it yourself if it is not wanted)`,
    );
  }
  const readerIndexes = await createScratch(dataSource, schema);
  // Resumed from the scratch's stored offsets after an outage: applyBatch skips what they cover.
  let done = 0;
  const counted = {
    ...options,
    onProgress: (now: number, total: number) => options.onProgress?.((done = now), total),
  };
  const origin = complete(new Map(), options.eventLog.partitions);
  const offsets = await rideOut(
    () => catchUp(counted, origin),
    options,
    () => done,
  );
  // Built again after an outage, but for those already there.
  const ifMissing = (definition: string) =>
    definition.replace(/^CREATE (UNIQUE )?INDEX /, '$&IF NOT EXISTS ');
  for (const { definition } of readerIndexes)
    await rideOut(() => dataSource.query(ifMissing(definition)), options);
  return offsets;
}

/** Drops `schema` and creates the read model's tables in it, unlogged, without the indexes only
 * readers use (`READER_INDEXES`), whose definitions it answers: they are built once the tables are
 * full. */
async function createScratch(
  dataSource: DataSource,
  schema: string,
): Promise<{ name: string; definition: string }[]> {
  // TypeORM's query runner: the read-model migration is a TypeORM migration.
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    await runner.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
    for (const Migration of readModelMigrations(schema)) await new Migration().up(runner);
    await runner.query(`COMMENT ON SCHEMA ${quoteIdent(schema)} IS '${SCRATCH_COMMENT}'`);
    // A scratch is rebuilt from the log whenever needed, never recovered: it writes no WAL.
    const tables: { name: string }[] = await runner.query(
      `SELECT tablename AS name FROM pg_tables WHERE schemaname = $1`,
      [schema],
    );
    for (const { name } of tables)
      await runner.query(`ALTER TABLE ${quoteIdent(schema)}.${quoteIdent(name)} SET UNLOGGED`);
    const readerIndexes: { name: string; definition: string }[] = await runner.query(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = $1 AND indexname = ANY($2)`,
      [schema, READER_INDEXES],
    );
    if (readerIndexes.length !== READER_INDEXES.length)
      throw new Error(`the read-model migrations no longer create every one of ${READER_INDEXES.join(', ')}`);
    for (const { name } of readerIndexes)
      await runner.query(`DROP INDEX ${quoteIdent(schema)}.${quoteIdent(name)}`);
    await runner.commitTransaction();
    return readerIndexes;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    throw error;
  } finally {
    await runner.release();
  }
}

/** True when the migrations made `schema` a live read model (the scratch's tables are never recorded). */
async function isMigrated(dataSource: DataSource, schema: string): Promise<boolean> {
  const names = readModelMigrations(schema).map((Migration) => new Migration().name);
  const [table] = await dataSource.query(`SELECT to_regclass('castlog_migrations') IS NOT NULL AS found`);
  if (!table?.found) return false;
  const rows: unknown[] = await dataSource.query(`SELECT 1 FROM castlog_migrations WHERE name = ANY($1)`, [
    names,
  ]);
  return rows.length > 0;
}

/** True when `schema` does not exist, or a replay built it: it carries SCRATCH_COMMENT, or (built
 * before the comment) it holds the read model's offsets table and no table that is not unlogged. */
async function isScratchOrAbsent(dataSource: DataSource, schema: string): Promise<boolean> {
  const [found] = await dataSource.query(
    `SELECT obj_description(n.oid, 'pg_namespace') AS comment,
            EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'projection_offsets'
                       AND c.relkind = 'r') AS has_offsets,
            EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p')
                       AND c.relpersistence <> 'u') AS has_logged_tables
       FROM pg_namespace n WHERE n.nspname = $1`,
    [schema],
  );
  if (found === undefined) return true;
  if (found.comment === SCRATCH_COMMENT) return true;
  return found.has_offsets === true && found.has_logged_tables === false;
}

/** Applies what the log holds past the offsets stored in `schema`, up to the log's end. Progress
 * counts from `origin` (where a catch-up that is resumed began), else from the stored offsets. */
export async function catchUp(
  { dataSource, eventLog, schema, onProgress }: ReplayOptions,
  origin?: Offsets,
): Promise<Offsets> {
  const from = complete(await storedOffsets(dataSource, schema), eventLog.partitions);
  const end = await eventLog.endOffsets();
  const since = (start: Offsets, to: Map<number, number>) =>
    [...to].reduce((sum, [partition, next]) => sum + Math.max(0, next - (start.get(partition) ?? 0)), 0);
  const total = since(origin ?? from, end);
  let done = since(origin ?? from, from);
  onProgress?.(done, total);
  // As the live projector: the batches the log hands over together (several partitions at once)
  // share transactions, several in flight.
  const transactions = batchTransactions(
    (batches) => applyBatch(dataSource, schema, batches, eventLog.partitions),
    REPLAY_BATCH_SIZE,
  );
  await eventLog.readToEnd(async (batch: LogBatch) => {
    for (let start = 0; start < batch.records.length; start += REPLAY_BATCH_SIZE) {
      const records = batch.records.slice(start, start + REPLAY_BATCH_SIZE);
      await transactions.submit([{ partition: batch.partition, records }]);
      done += records.length;
      onProgress?.(done, Math.max(total, done));
    }
  }, from);
  return complete(await storedOffsets(dataSource, schema), eventLog.partitions);
}

/** `work` until it succeeds, tried again with capped backoff while it fails because a dependency is
 * out of reach (`isUnavailableError`: PostgreSQL or Kafka refusing, restarting, or no connection
 * within the connect timeout), as every castlog process rides out an outage; any other failure is
 * final, and so is an outage that lasts OUTAGE_LIMIT_MS without the replay getting any further
 * (`onProgress`). `work` must be safe to run again: a catch-up is, as it resumes from the stored
 * offsets. */
export async function rideOut<T>(
  work: () => Promise<T>,
  { onOutage, limitMs = OUTAGE_LIMIT_MS }: { onOutage?: ReplayOptions['onOutage']; limitMs?: number },
  progress: () => number = () => 0,
): Promise<T> {
  let outage: { since: number; at: number } | undefined;
  const result = await retry(work, {
    initialMs: 500,
    maxMs: 5_000,
    retryable: isUnavailableError,
    onFailure: (error, _failures, delayMs) => {
      if (outage === undefined || progress() !== outage.at) outage = { since: Date.now(), at: progress() };
      if (Date.now() - outage.since > limitMs) throw error;
      onOutage?.(error, delayMs);
    },
  });
  return result as T;
}

export const complete = (offsets: Map<number, number>, partitions: number): Offsets =>
  new Map(Array.from({ length: partitions }, (_, partition) => [partition, offsets.get(partition) ?? 0]));

export const sameOffsets = (a: Offsets, b: Offsets): boolean =>
  a.size === b.size && [...a].every(([partition, next]) => b.get(partition) === next);

export const describeOffsets = (offsets: Offsets): string =>
  [...offsets].map(([partition, next]) => `${partition}:${next}`).join(' ');
