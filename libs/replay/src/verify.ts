import {
  DeletionSagaQuery,
  hasProjection,
  inTransaction,
  OffsetWatch,
  quoteIdent,
  Sql,
  storedOffsets,
} from '@castlog/read-model';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import {
  catchUp,
  complete,
  DEFAULT_LIVE_SCHEMA,
  describeOffsets,
  Offsets,
  replayInto,
  ReplayOptions,
  sameOffsets,
} from './replay';

/** One row that differs between the live read model and the replay; a side is null where the row
 * is missing. */
export interface ReplayDifference {
  readonly table: string;
  readonly key: Record<string, unknown>;
  readonly live: Record<string, unknown> | null;
  readonly replayed: Record<string, unknown> | null;
}

/** The compared tables (and views) and their keys, every column of each (the sync face's among
 * them). The read model's other tables are NOT_COMPARED, or stored in one compared here.
 * `omit` names columns that say where a row is stored, not what it holds: a read model written
 * before `created_feed_url` existed keeps its feed_urls in the table behind `subscription_feed_urls`,
 * which is compared as the view. `storedIn`: the tables whose rows, every column, this one is made
 * of; when those are equal on both sides so is this one, and it is not compared again. */
export const COMPARED_TABLES: readonly {
  readonly table: string;
  readonly key: readonly string[];
  readonly omit?: readonly string[];
  readonly storedIn?: readonly string[];
}[] = [
  { table: 'subscriptions', key: ['user_id', 'id'], omit: ['created_feed_url'], storedIn: ['subscriptions'] },
  {
    table: 'subscription_guids',
    key: ['user_id', 'guid'],
    storedIn: ['subscriptions', 'subscription_later_guids'],
  },
  {
    table: 'subscription_feed_urls',
    key: ['user_id', 'normalized_feed_url'],
    storedIn: ['subscriptions', 'subscription_later_feed_urls'],
  },
  { table: 'deletions', key: ['deletion_id'] },
  { table: 'user_clocks', key: ['user_id'] },
  { table: 'devices', key: ['user_id', 'id'] },
  { table: 'episode_actions', key: ['user_id', 'sequence', 'ordinal'] },
  { table: 'request_outcomes', key: ['partition', 'offset'] },
  { table: 'sync_actions', key: ['user_id', 'action_id'] },
  { table: 'gpodder_settings', key: ['user_id', 'scope_id'] },
];

/** The read model's tables the comparison leaves out: `projection_offsets` is compared before (it
 * gates the comparison); `deletion_saga` is the live saga's own bookkeeping, not a projection of
 * the log. */
export const NOT_COMPARED: readonly string[] = ['projection_offsets', 'deletion_saga'];

/** Memory for a comparison's hash aggregates and sorts, so that a large read model's rows are counted
 * in memory rather than in batches spilled to disk. */
const COMPARE_WORK_MEM = '1GB';

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
  const { dataSource, schema } = options;
  const liveSchema = options.liveSchema ?? DEFAULT_LIVE_SCHEMA;
  if (liveSchema === schema) throw new Error(`the scratch schema must not be the live one (${schema})`);
  const attempts = options.attempts ?? 10;
  const watcher = await watchLiveOffsets(dataSource, liveSchema);
  try {
    let scratch = (await hasProjection(dataSource, schema))
      ? await catchUp(options)
      : await replayInto(options);
    let why = '';
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      const live = await reachLive(watcher, liveSchema, scratch, options.liveTimeoutMs ?? 60_000);
      if (sameOffsets(live, scratch)) {
        const compared = await compareInSnapshot(options, liveSchema);
        if (compared.differences) return compared.differences;
        why = compared.why;
        // Whatever kept the snapshot from being comparable ends with an append or a stored offset.
        await watcher.nextAdvance(1000);
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

/** An OffsetWatch of the live projection's stored offsets (on a connection of its own, to the
 * database `dataSource` opens). */
export async function watchLiveOffsets(dataSource: DataSource, schema: string): Promise<OffsetWatch> {
  const { url } = dataSource.options as { url?: string };
  if (!url) throw new Error('the database must be given by URL to watch the live projection');
  const watch = new OffsetWatch(url, dataSource, { component: 'live offsets', schema: () => schema });
  await watch.start();
  return watch;
}

/** Waits until the live offsets reach `target` in every partition (or pass it in one) and answers
 * them; fails when they stay behind for `timeoutMs`. */
export async function reachLive(
  watch: OffsetWatch,
  schema: string,
  target: Offsets,
  timeoutMs: number,
): Promise<Offsets> {
  const { reached, offsets } = await watch.reach(target, timeoutMs);
  if (reached) return offsets;
  throw new Error(
    `the live projection (schema ${schema}) stayed at ${describeOffsets(offsets)} for ${timeoutMs} ms, ` +
      `behind the log's ${describeOffsets(target)}: is the projector running?`,
  );
}

/** The comparison in one REPEATABLE READ snapshot: `differences` when the snapshot was comparable,
 * else why not. The transaction only reads. */
function compareInSnapshot(
  { dataSource, eventLog, schema, limitPerTable }: VerifyOptions,
  liveSchema: string,
): Promise<{ differences: ReplayDifference[]; why?: undefined } | { differences?: undefined; why: string }> {
  return inTransaction(
    dataSource,
    async (sql) => {
      await sql.query(`SET LOCAL work_mem = '${COMPARE_WORK_MEM}'`);
      // One snapshot for the whole transaction: everything below sees the same instant.
      const live = complete(await storedOffsets(sql, liveSchema), eventLog.partitions);
      const scratch = complete(await storedOffsets(sql, schema), eventLog.partitions);
      if (!sameOffsets(live, scratch))
        return { why: `the live projection moved on to ${describeOffsets(live)}` };
      const unlogged = await new DeletionSagaQuery(liveSchema).countUnlogged(sql);
      if (unlogged > 0) return { why: `the deletion saga has ${unlogged} result(s) not yet in the log` };
      // A saga result logged before the snapshot is in the log by now: then the log is past the scratch.
      const end = complete(await eventLog.endOffsets(), eventLog.partitions);
      if (!sameOffsets(end, scratch)) return { why: `the log moved on to ${describeOffsets(end)}` };
      const differences: ReplayDifference[] = [];
      const seeds = fingerprintSeeds();
      const stored = new Map<string, boolean>();
      const storedAlike = async (table: string): Promise<boolean> => {
        let same = stored.get(table);
        if (same === undefined) {
          const columns = await columnsOf(sql, liveSchema, table, []);
          stored.set(table, (same = await sameFingerprint(sql, liveSchema, schema, table, columns, seeds)));
        }
        return same;
      };
      for (const { table, key, omit, storedIn } of COMPARED_TABLES) {
        if (storedIn && (await everyOf(storedIn, storedAlike))) continue;
        const columns = await columnsOf(sql, liveSchema, table, omit ?? []);
        if (await sameFingerprint(sql, liveSchema, schema, table, columns, seeds)) continue;
        differences.push(
          ...(await compareTable(sql, liveSchema, schema, table, key, columns, limitPerTable ?? 1000)),
        );
      }
      return { differences };
    },
    { isolation: 'REPEATABLE READ' },
  );
}

/** Rows of `table` that are not in both schemas alike (in `columns`, `columnsOf`), in one pass over
 * each side (`excess`), those of each side paired by key (FULL JOIN). */
async function compareTable(
  sql: Sql,
  liveSchema: string,
  scratchSchema: string,
  table: string,
  key: readonly string[],
  columns: string,
  limit: number,
): Promise<ReplayDifference[]> {
  const keyObject = (alias: string) =>
    `jsonb_build_object(${key.map((column) => `'${column}', ${alias}.${quoteIdent(column)}`).join(', ')})`;
  const rowsInExcess = (sign: '>' | '<') =>
    `SELECT ${keyObject('e')} AS key, to_jsonb(e) - '${EXCESS}' AS row
       FROM excess e CROSS JOIN generate_series(1, abs(e.${EXCESS})) WHERE e.${EXCESS} ${sign} 0`;
  return sql.query<ReplayDifference>(
    `WITH ${excess(liveSchema, scratchSchema, table, columns)},
          l AS (${rowsInExcess('>')}),
          r AS (${rowsInExcess('<')})
     SELECT $1::text AS "table", coalesce(l.key, r.key) AS key, l.row AS live, r.row AS replayed
       FROM l FULL JOIN r ON l.key = r.key
      ORDER BY coalesce(l.key, r.key)::text
      LIMIT $2`,
    [table, limit],
  );
}

/** Four random 64-bit seeds, new for every comparison: a read model cannot be fitted in advance to
 * fingerprints whose seeds were not chosen yet. */
function fingerprintSeeds(): readonly string[] {
  const bytes = randomBytes(32);
  return [0, 8, 16, 24].map((offset) => bytes.readBigInt64LE(offset).toString());
}

/** Whether `table` (in `columns`, `columnsOf`) holds the same rows in both schemas, told by a
 * fingerprint of each side: the row count and two sums, over every row, of a 64-bit hash of the
 * row, each seeded anew (`seeds`). Equal rows give equal fingerprints, so fingerprints that differ
 * mean the tables differ; equal ones mean equal tables, wrongly with a chance of about 2^-128.
 * Each side is one scan that PostgreSQL spreads over its parallel workers, with nothing to keep in
 * memory, where comparing the rows themselves hashes every row of both sides into one table (the
 * 2.3 million subscriptions of a 1,000,000-event log: 1.8 s a side against 24 s for both). The row
 * hash is hashed once more because PostgreSQL's record hash is a linear combination of its
 * columns' hashes: summed over rows as it is, it would tell only each column's values apart, not
 * which row holds them. */
async function sameFingerprint(
  sql: Sql,
  liveSchema: string,
  scratchSchema: string,
  table: string,
  columns: string,
  seeds: readonly string[],
): Promise<boolean> {
  const rowHash = (seed: string, mix: string) =>
    `coalesce(sum(hashint8extended(hash_record_extended(ROW(${columns}), ${seed}), ${mix})), 0)::text`;
  const fingerprint = (schema: string) =>
    `SELECT count(*)::text AS rows, ${rowHash('$1', '$2')} AS a, ${rowHash('$3', '$4')} AS b
       FROM ${quoteIdent(schema)}.${quoteIdent(table)}`;
  const fingerprintOf = async (schema: string) => {
    const [row] = await sql.query<{ rows: string; a: string; b: string }>(fingerprint(schema), [...seeds]);
    return `${row?.rows} ${row?.a} ${row?.b}`;
  };
  return (await fingerprintOf(liveSchema)) === (await fingerprintOf(scratchSchema));
}

/** `table`'s columns but `omit`, quoted, in their order, as the live schema has them. */
async function columnsOf(
  sql: Sql,
  liveSchema: string,
  table: string,
  omit: readonly string[],
): Promise<string> {
  const kept = await sql.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
      WHERE table_schema = $1 AND table_name = $2 AND column_name <> ALL($3::text[]) ORDER BY ordinal_position`,
    [liveSchema, table, omit],
  );
  return kept.map(({ name }) => quoteIdent(name)).join(', ');
}

/** The CTEs that compare `table` in one pass over each side: every row of both counted by its
 * `columns` (+1 live, −1 replayed), and in `excess` the rows whose counts do not cancel, with how
 * many more times the live side holds them (negative: the replay). */
function excess(liveSchema: string, scratchSchema: string, table: string, columns: string): string {
  const from = (schema: string) => `${quoteIdent(schema)}.${quoteIdent(table)}`;
  return `sides AS (SELECT ${columns}, 1 AS ${SIDE} FROM ${from(liveSchema)}
                    UNION ALL
                    SELECT ${columns}, -1 FROM ${from(scratchSchema)}),
          excess AS (SELECT ${columns}, sum(${SIDE})::int AS ${EXCESS} FROM sides
                      GROUP BY ${columns} HAVING sum(${SIDE}) <> 0)`;
}

/** `test` of each item in turn, up to the first that fails. */
async function everyOf<T>(items: readonly T[], test: (item: T) => Promise<boolean>): Promise<boolean> {
  for (const item of items) if (!(await test(item))) return false;
  return true;
}

/** Names of the comparison's own columns, apart from any a read-model table has. */
const SIDE = 'castlog_compared_side';
const EXCESS = 'castlog_compared_excess';

/** One line: the table and key, then the columns that differ, or the row only one side has. */
export function describeDifference({ table, key, live, replayed }: ReplayDifference): string {
  const where = `${table} ${JSON.stringify(key)}`;
  if (live === null) return `${where}: only in the replay: ${JSON.stringify(replayed)}`;
  if (replayed === null) return `${where}: only in the live read model: ${JSON.stringify(live)}`;
  const columns = [...new Set([...Object.keys(live), ...Object.keys(replayed)])].filter(
    (column) => JSON.stringify(live[column]) !== JSON.stringify(replayed[column]),
  );
  const changes = columns.map(
    (column) =>
      `${column} live ${JSON.stringify(live[column])}, replayed ${JSON.stringify(replayed[column])}`,
  );
  return `${where}: ${changes.join('; ')}`;
}
