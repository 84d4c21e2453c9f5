import { configSchema } from '@castlog/config';
import { EventLog, LogBatch } from '@castlog/event-log';
import { OFFSETS_CHANNEL, quoteIdent, readModelMigrations, Sql, storedOffsets } from '@castlog/read-model';
import { DataSource, QueryRunner } from 'typeorm';
import { applyBatch, batchTransactions } from '../projection/apply-batch';

/** The live projection's schema when none is named: READ_MODEL_SCHEMA's default. */
export const DEFAULT_LIVE_SCHEMA: string = configSchema.shape.READ_MODEL_SCHEMA.parse(undefined);

/** Records per transaction at most, as the live projector's default PROJECTOR_BATCH_SIZE. */
const REPLAY_BATCH_SIZE = 2000;

/** Schemas a replay must never drop. */
const PROTECTED_SCHEMAS = /^(public|information_schema|pg_.*|castlog_auth|castlog_log)$/;

export type ReplayProgress = (done: number, total: number) => void;

export interface ReplayOptions {
  readonly dataSource: DataSource;
  readonly eventLog: EventLog;
  /** The scratch schema: dropped and rebuilt. */
  readonly schema: string;
  readonly onProgress?: ReplayProgress;
}

/** A partition's next offset for every partition of the log (0 where nothing is stored). */
export type Offsets = Map<number, number>;

/** Rebuilds the read model from offset 0 into `schema`: drops it, creates its tables with the
 * read-model migration (run directly, not recorded in the migrations table), then applies every
 * record of the log through `applyBatch`, the live projector's own code path, so the result is a
 * function of the log alone. Answers the offsets reached. */
export async function replayInto(options: ReplayOptions): Promise<Offsets> {
  const { dataSource, schema } = options;
  if (PROTECTED_SCHEMAS.test(schema) || (await isMigrated(dataSource, schema))) {
    throw new Error(`refusing to replay into schema ${schema}: it is not a scratch schema`);
  }
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    await runner.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
    for (const Migration of readModelMigrations(schema)) await new Migration().up(runner);
    await runner.commitTransaction();
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    throw error;
  } finally {
    await runner.release();
  }
  return catchUp(options);
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

/** Applies what the log holds past the offsets stored in `schema`, up to the log's end. */
async function catchUp({ dataSource, eventLog, schema, onProgress }: ReplayOptions): Promise<Offsets> {
  const from = complete(await storedOffsets(dataSource, schema), eventLog.partitions);
  const end = await eventLog.endOffsets();
  const total = [...end].reduce(
    (sum, [partition, high]) => sum + Math.max(0, high - (from.get(partition) ?? 0)),
    0,
  );
  let done = 0;
  onProgress?.(0, total);
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

const complete = (offsets: Map<number, number>, partitions: number): Offsets =>
  new Map(Array.from({ length: partitions }, (_, partition) => [partition, offsets.get(partition) ?? 0]));

const sameOffsets = (a: Offsets, b: Offsets): boolean =>
  a.size === b.size && [...a].every(([partition, next]) => b.get(partition) === next);

const describeOffsets = (offsets: Offsets): string =>
  [...offsets].map(([partition, next]) => `${partition}:${next}`).join(' ');

/** One row that differs between the live read model and the replay; a side is null where the row
 * is missing. */
export interface ReplayDifference {
  readonly table: string;
  readonly key: Record<string, unknown>;
  readonly live: Record<string, unknown> | null;
  readonly replayed: Record<string, unknown> | null;
}

/** The compared tables and their keys. `projection_offsets` is compared before (it gates the
 * comparison); `deletion_saga` is the live saga's own bookkeeping, not a projection of the log. */
export const COMPARED_TABLES: readonly { readonly table: string; readonly key: readonly string[] }[] = [
  { table: 'subscriptions', key: ['user_id', 'id'] },
  { table: 'subscription_guids', key: ['user_id', 'guid'] },
  { table: 'subscription_feed_urls', key: ['user_id', 'normalized_feed_url'] },
  { table: 'deletions', key: ['deletion_id'] },
  { table: 'user_clocks', key: ['user_id'] },
  { table: 'request_outcomes', key: ['partition', 'offset'] },
];

export interface VerifyOptions extends ReplayOptions {
  /** The live projection's schema; READ_MODEL_SCHEMA's default when not given. */
  readonly liveSchema?: string;
  /** How many times to catch the scratch up when the log moved on; default 10. */
  readonly attempts?: number;
  /** How long to wait, each time, for the live projection to reach the scratch's offsets; default 60 s. */
  readonly liveTimeoutMs?: number;
  /** Differences reported per table at most; default 1000. */
  readonly limitPerTable?: number;
}

/** Brings the scratch schema up to the log's end (replaying from 0 when it holds no projection),
 * waits until the live projection has applied exactly as much, and compares the two table by
 * table in one REPEATABLE READ snapshot, in which it checks again that both stand at the same
 * offsets, that the log has not moved past them, and that the live deletion saga has no result it
 * has not logged yet (its cascade is in the live read model before its event is in the log). When
 * the log moved on, the scratch catches up again, a bounded number of times. Answers the
 * differences; none means the live read model is what the log alone makes. */
export async function verifyReplay(options: VerifyOptions): Promise<ReplayDifference[]> {
  const { dataSource, eventLog, schema } = options;
  const liveSchema = options.liveSchema ?? DEFAULT_LIVE_SCHEMA;
  if (liveSchema === schema) throw new Error(`the scratch schema must not be the live one (${schema})`);
  const attempts = options.attempts ?? 10;
  const watcher = await LiveOffsets.watch(dataSource, liveSchema, eventLog.partitions);
  try {
    let scratch = (await hasProjection(dataSource, schema))
      ? await catchUp(options)
      : await replayInto(options);
    let why = '';
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      const live = await watcher.reach(scratch, options.liveTimeoutMs ?? 60_000);
      if (sameOffsets(live, scratch)) {
        const compared = await compareInSnapshot(options, liveSchema);
        if (compared.differences) return compared.differences;
        why = compared.why;
        // Whatever kept the snapshot from being comparable ends with an append or a stored offset.
        await watcher.nextNotice(1000);
      } else {
        why = `the live projection moved on to ${describeOffsets(live)}`;
      }
      scratch = await catchUp(options);
    }
    throw new Error(
      `could not compare the live read model with the replay after ${attempts} attempts: ${why}`,
    );
  } finally {
    await watcher.close();
  }
}

async function hasProjection(dataSource: DataSource, schema: string): Promise<boolean> {
  const rows: unknown[] = await dataSource.query(
    `SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'projection_offsets'`,
    [schema],
  );
  return rows.length > 0;
}

const sqlOf = (runner: QueryRunner): Sql => ({ query: (text, params) => runner.query(text, params) });

/** The live projection's stored offsets, on a connection that listens to the projector's NOTIFY. */
class LiveOffsets {
  private wake: () => void = () => undefined;

  private constructor(
    private readonly runner: QueryRunner,
    private readonly client: NotificationSource,
    private readonly schema: string,
    private readonly partitions: number,
  ) {
    client.on('notification', this.onNotification);
  }

  private readonly onNotification = () => this.wake();

  static async watch(dataSource: DataSource, schema: string, partitions: number): Promise<LiveOffsets> {
    const runner = dataSource.createQueryRunner();
    const client = (await runner.connect()) as NotificationSource;
    const watcher = new LiveOffsets(runner, client, schema, partitions);
    try {
      await runner.query(`LISTEN ${OFFSETS_CHANNEL}`);
    } catch (error) {
      await watcher.close();
      throw error;
    }
    return watcher;
  }

  /** Resolves at the next NOTIFY on the offsets channel, or after `ms`. */
  nextNotice(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = () => undefined;
        resolve();
      };
    });
  }

  /** Waits until the live offsets reach `target` in every partition (or pass it in one) and answers
   * them; fails when they stay behind for `timeoutMs`. */
  async reach(target: Offsets, timeoutMs: number): Promise<Offsets> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const notice = this.nextNotice(1000);
      const live = complete(await storedOffsets(sqlOf(this.runner), this.schema), this.partitions);
      const behind = [...target].some(([partition, next]) => (live.get(partition) ?? 0) < next);
      const ahead = [...target].some(([partition, next]) => (live.get(partition) ?? 0) > next);
      if (!behind || ahead) return live;
      if (Date.now() >= deadline) {
        throw new Error(
          `the live projection (schema ${this.schema}) stayed at ${describeOffsets(live)} for ${timeoutMs} ms, ` +
            `behind the log's ${describeOffsets(target)}: is the projector running?`,
        );
      }
      await notice;
    }
  }

  async close(): Promise<void> {
    this.client.off('notification', this.onNotification);
    await this.runner.query(`UNLISTEN ${OFFSETS_CHANNEL}`).catch(() => undefined);
    await this.runner.release();
  }
}

interface NotificationSource {
  on(event: 'notification', listener: () => void): unknown;
  off(event: 'notification', listener: () => void): unknown;
}

/** The comparison in one REPEATABLE READ snapshot: `differences` when the snapshot was comparable,
 * else why not. */
async function compareInSnapshot(
  { dataSource, eventLog, schema, limitPerTable }: VerifyOptions,
  liveSchema: string,
): Promise<{ differences: ReplayDifference[]; why?: undefined } | { differences?: undefined; why: string }> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction('REPEATABLE READ');
    // The first query fixes the snapshot; everything below sees the same instant.
    const live = complete(await storedOffsets(sqlOf(runner), liveSchema), eventLog.partitions);
    const scratch = complete(await storedOffsets(sqlOf(runner), schema), eventLog.partitions);
    if (!sameOffsets(live, scratch))
      return { why: `the live projection moved on to ${describeOffsets(live)}` };
    const [saga] = await runner.query(
      `SELECT count(*)::int AS unlogged FROM ${quoteIdent(liveSchema)}.deletion_saga WHERE NOT logged`,
    );
    if (saga.unlogged > 0)
      return { why: `the deletion saga has ${saga.unlogged} result(s) not yet in the log` };
    // A saga result logged before the snapshot is in the log by now: then the log is past the scratch.
    const end = complete(await eventLog.endOffsets(), eventLog.partitions);
    if (!sameOffsets(end, scratch)) return { why: `the log moved on to ${describeOffsets(end)}` };
    const differences: ReplayDifference[] = [];
    for (const { table, key } of COMPARED_TABLES) {
      differences.push(
        ...(await compareTable(runner, liveSchema, schema, table, key, limitPerTable ?? 1000)),
      );
    }
    return { differences };
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    await runner.release();
  }
}

/** Rows of `table` that are not in both schemas alike, set-based: the rows of each side missing
 * from the other (EXCEPT), paired by key (FULL JOIN). */
async function compareTable(
  runner: QueryRunner,
  liveSchema: string,
  scratchSchema: string,
  table: string,
  key: readonly string[],
  limit: number,
): Promise<ReplayDifference[]> {
  const live = `${quoteIdent(liveSchema)}.${quoteIdent(table)}`;
  const replayed = `${quoteIdent(scratchSchema)}.${quoteIdent(table)}`;
  const keyObject = (alias: string) =>
    `jsonb_build_object(${key.map((column) => `'${column}', ${alias}.${quoteIdent(column)}`).join(', ')})`;
  const rows: ReplayDifference[] = await runner.query(
    `WITH only_live AS (SELECT * FROM ${live} EXCEPT ALL SELECT * FROM ${replayed}),
          only_replayed AS (SELECT * FROM ${replayed} EXCEPT ALL SELECT * FROM ${live}),
          l AS (SELECT ${keyObject('o')} AS key, to_jsonb(o) AS row FROM only_live o),
          r AS (SELECT ${keyObject('o')} AS key, to_jsonb(o) AS row FROM only_replayed o)
     SELECT $1::text AS "table", coalesce(l.key, r.key) AS key, l.row AS live, r.row AS replayed
       FROM l FULL JOIN r ON l.key = r.key
      ORDER BY coalesce(l.key, r.key)::text
      LIMIT $2`,
    [table, limit],
  );
  return rows;
}
