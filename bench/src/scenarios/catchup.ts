import { LogBatch } from '@castlog/event-log';
import { AppliedBatch, applyBatch, applyInTransaction, batchTransactions } from '@castlog/projection';
import { inTransaction, quoteIdent, readModelMigrations, Sql, storedOffset } from '@castlog/read-model';
import { OpenedRuntime, openRuntime } from '@castlog/runtime';
import { Pool, PoolClient } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';
import { benchConfig, createDatabase, deleteTopics, uniqueName } from '../castlog';
import { EventMix } from '../event-mix';
import { BenchInfra } from '../infra';
import { BoundedQueue } from '../queue';
import { ScenarioOutcome, SummaryRow } from '../report';
import { ratio, round, since, summarize } from '../stats';

export interface CatchupOptions {
  readonly events: number;
  /** Time every statement of applyBatch (load / decide / write / commit) instead of calling it. */
  readonly profile: boolean;
  readonly log: (line: string) => void;
}

/** What the replay scenario needs from this one: the log, and a live schema at the log's end. */
export interface LogFixture {
  readonly runtime: OpenedRuntime;
  readonly liveSchema: string;
  readonly events: number;
  readonly catchupEventsPerS: number;
  close(): Promise<void>;
}

const APPEND_CHUNK = 10_000;
const APPEND_IN_FLIGHT = 3;

/** Appends `events` of the mix in big batches (several in flight, gathered by the adapter). */
async function fillLog(runtime: OpenedRuntime, events: number, log: (line: string) => void) {
  const mix = new EventMix(Math.max(200, Math.round(events / 50)));
  const started = performance.now();
  let appended = 0;
  let nextReport = 100_000;
  const inFlight = new Set<Promise<void>>();
  while (appended < events) {
    const count = Math.min(APPEND_CHUNK, events - appended);
    appended += count;
    const append: Promise<void> = runtime.eventLog.append(mix.next(count)).then(() => {
      inFlight.delete(append);
    });
    inFlight.add(append);
    if (inFlight.size >= APPEND_IN_FLIGHT) await Promise.race(inFlight);
    if (appended >= nextReport) {
      log(
        `catchup: appended ${appended.toLocaleString('en-US')} of ${events.toLocaleString('en-US')} events`,
      );
      nextReport += 100_000;
    }
  }
  await Promise.all(inFlight);
  const seconds = since(started) / 1000;
  return { seconds, eventsPerS: events / seconds, counts: mix.counts };
}

/** Statement timings of an instrumented applyBatch, by stage. */
class StageTimer {
  readonly ms: Record<string, number> = {};
  readonly rows: Record<string, number> = {};

  add(stage: string, ms: number): void {
    this.ms[stage] = (this.ms[stage] ?? 0) + ms;
  }

  /** The stage of a statement of applyInTransaction, loadStates and runWrites. */
  static stageOf(text: string): string {
    const t = text.replace(/\s+/g, ' ').trim();
    if (t.includes('offsets_moved')) return 'write changes, outcomes, offsets';
    if (t.includes('projection_offsets')) return 'offsets';
    if (t.includes('user_clocks') && t.includes('RETURNING user_id, last_instant')) return 'lock clocks';
    if (t.startsWith('WITH RECURSIVE') || t.startsWith('SELECT')) return 'load state';
    return 'other';
  }
}

/** applyBatch, with the same transaction, and every statement timed by stage. */
async function applyBatchTimed(
  dataSource: DataSource,
  schema: string,
  batches: LogBatch[],
  partitions: number,
  timer: StageTimer,
): Promise<AppliedBatch[]> {
  const started = performance.now();
  let committing = started;
  try {
    return await inTransaction(dataSource, async (sql) => {
      timer.add('begin', since(started));
      let inSql = 0;
      const timed: Sql = {
        query: async (text, params) => {
          const start = performance.now();
          if (
            process.env.BENCH_EXPLAIN &&
            StageTimer.stageOf(text) === 'load state' &&
            Math.random() < 0.05
          ) {
            const plan = await sql.query<Record<string, string>>(
              `EXPLAIN (ANALYZE, BUFFERS) ${text}`,
              params,
            );
            console.error(plan.map((r) => r['QUERY PLAN']).join('\n'));
          }
          try {
            return await sql.query(text, params);
          } finally {
            const ms = since(start);
            inSql += ms;
            timer.add(StageTimer.stageOf(text), ms);
          }
        },
      };
      const t = performance.now();
      const result = await applyInTransaction(timed, schema, batches, partitions);
      // What is not a statement: keys, decide, evolve, building the rows and parameters.
      timer.add('decide + build rows (JS)', since(t) - inSql);
      committing = performance.now();
      return result;
    });
  } finally {
    if (committing > started) timer.add('commit', since(committing));
  }
}

/** The projector's consume loop (what ProjectionConsumer does: the adapter's consumer, batches of
 * PROJECTOR_BATCH_SIZE, every partition at once, batchTransactions feeding applyBatch) from offset 0
 * into the runtime's fresh schema, until the stored offsets reach the log's end. */
async function catchUp(
  runtime: OpenedRuntime,
  total: number,
  profile: StageTimer | undefined,
  log: (line: string) => void,
) {
  const { dataSource, schema } = runtime.database;
  const partitions = runtime.eventLog.partitions;
  const batchMs: number[] = [];
  const batchSizes: number[] = [];
  let applied = 0;
  let firstBatchAt: number | undefined;
  let lastReport = 0;
  let failure: unknown;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const started = performance.now();
  const cpu = process.cpuUsage();
  const transactions = batchTransactions(async (batches) => {
    const t = performance.now();
    const results = profile
      ? await applyBatchTimed(dataSource, schema, batches, partitions, profile)
      : await applyBatch(dataSource, schema, batches, partitions);
    const count = results.reduce((sum, result) => sum + result.applied, 0);
    batchMs.push(since(t));
    batchSizes.push(count);
    applied += count;
    return results;
  }, runtime.config.PROJECTOR_BATCH_SIZE);
  const consumer = await runtime.eventLog.consume({
    group: uniqueName('bench_catchup'),
    maxBatchSize: runtime.config.PROJECTOR_BATCH_SIZE,
    startFrom: (partition) => storedOffset(dataSource, schema, partition),
    onError: (error) => {
      failure = error;
      done();
    },
    handle: async (batch) => {
      firstBatchAt ??= performance.now();
      await transactions.submit([batch]);
      if (applied - lastReport >= 100_000) {
        lastReport = applied;
        log(`catchup: applied ${applied.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} events`);
      }
      if (applied >= total) done();
    },
  });
  await finished;
  const elapsed = since(started);
  const { user, system } = process.cpuUsage(cpu);
  await consumer.stop();
  if (failure) throw failure;
  const lastOffsets = await runtime.eventLog.endOffsets();
  for (const [partition, end] of lastOffsets) {
    const stored = await storedOffset(dataSource, schema, partition);
    if (stored !== end) throw new Error(`partition ${partition}: stored offset ${stored}, log end ${end}`);
  }
  return {
    seconds: elapsed / 1000,
    joinSeconds: ((firstBatchAt ?? started) - started) / 1000,
    eventsPerS: applied / (elapsed / 1000),
    nodeCpuShare: (user + system) / 1000 / elapsed,
    batches: batchMs.length,
    meanBatch: batchSizes.reduce((a, b) => a + b, 0) / Math.max(1, batchSizes.length),
    batchLatency: summarize(batchMs),
  };
}

const COPIED_TABLES = [
  'subscriptions',
  'subscription_guids',
  'subscription_feed_urls',
  'deletions',
  'user_clocks',
  'request_outcomes',
];
const BULK_ROWS = 5000;
const BULK_WRITERS = 4;

interface Column {
  name: string;
  type: string;
  key: boolean;
}

async function columnsOf(client: PoolClient, schema: string, table: string): Promise<Column[]> {
  const { rows } = await client.query<{ name: string; type: string; key: boolean }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            coalesce(a.attnum = ANY(i.indkey), false) AS key
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
      WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      ORDER BY a.attnum`,
    [schema, table],
  );
  return rows;
}

/** The baseline: the rows the catch-up produced, read back page by page and written into a fresh
 * schema of the same tables and indexes with raw `INSERT … SELECT FROM unnest … ON CONFLICT DO
 * UPDATE`, BULK_WRITERS statements at a time (the projector has up to PARALLEL_TRANSACTIONS = 4 transactions in flight). */
async function bulkBaseline(databaseUrl: string, from: string, log: (line: string) => void) {
  const to = uniqueName('bench_bulk');
  const pool = new Pool({ connectionString: databaseUrl, max: BULK_WRITERS + 2 });
  const setup = await pool.connect();
  try {
    await setup.query('BEGIN');
    const runner = { query: (text: string) => setup.query(text) } as unknown as QueryRunner;
    for (const Migration of readModelMigrations(to)) await new Migration().up(runner);
    await setup.query('COMMIT');
  } finally {
    setup.release();
  }
  let rows = 0;
  const writeMs: number[] = [];
  const started = performance.now();
  for (const table of COPIED_TABLES) {
    const reader = await pool.connect();
    try {
      const columns = await columnsOf(reader, from, table);
      const keys = columns.filter((c) => c.key).map((c) => quoteIdent(c.name));
      const others = columns.filter((c) => !c.key).map((c) => quoteIdent(c.name));
      const insert =
        `INSERT INTO ${quoteIdent(to)}.${quoteIdent(table)} (${columns.map((c) => quoteIdent(c.name)).join(', ')}) ` +
        `SELECT * FROM unnest(${columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ')}) ` +
        `ON CONFLICT (${keys.join(', ')}) ` +
        (others.length
          ? `DO UPDATE SET ${others.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`
          : 'DO NOTHING');
      await reader.query('BEGIN');
      await reader.query(
        `DECLARE rows NO SCROLL CURSOR FOR SELECT ${columns.map((c) => `${quoteIdent(c.name)}::text`).join(', ')} ` +
          `FROM ${quoteIdent(from)}.${quoteIdent(table)}`,
      );
      const queue = new BoundedQueue<string[][]>(BULK_WRITERS * 2);
      const writer = async () => {
        try {
          for (let page = await queue.shift(); page; page = await queue.shift()) {
            const t = performance.now();
            const rowsOfPage = page;
            await pool.query(
              insert,
              columns.map((_, i) => rowsOfPage.map((row) => row[i])),
            );
            writeMs.push(since(t));
            rows += page.length;
          }
        } catch (error) {
          queue.close();
          throw error;
        }
      };
      const writers = Array.from({ length: BULK_WRITERS }, () => writer());
      try {
        for (;;) {
          const { rows: page } = await reader.query<string[]>({
            text: `FETCH ${BULK_ROWS} FROM rows`,
            rowMode: 'array',
          });
          if (page.length === 0 || !(await queue.push(page))) break;
        }
      } finally {
        queue.close();
        await Promise.all(writers);
      }
      await reader.query('COMMIT');
    } finally {
      reader.release();
    }
    log(`catchup: baseline copied ${table}`);
  }
  const seconds = since(started) / 1000;
  await pool.query(`DROP SCHEMA ${quoteIdent(to)} CASCADE`).catch(() => undefined);
  await pool.end();
  return { seconds, rows, statementLatency: summarize(writeMs) };
}

/** Appends N events, then a fresh projection catches up from offset 0; baseline: the raw bulk
 * upsert of the rows it produced. Leaves the log and the caught-up schema for the replay scenario. */
export async function catchupScenario(
  infra: BenchInfra,
  options: CatchupOptions,
): Promise<{ outcome: ScenarioOutcome; fixture: LogFixture }> {
  const { log, events } = options;
  const database = await createDatabase(infra.databaseUrl, uniqueName('castlog_bench_catchup'));
  const config = benchConfig(database.url, infra.kafkaBrokers);
  const runtime = await openRuntime(config);
  const close = async () => {
    await runtime.close().catch((error: unknown) => log(`catchup: closing: ${String(error)}`));
    await deleteTopics(infra.kafkaBrokers, [config.KAFKA_TOPIC]).catch(() => undefined);
    await database.drop().catch((error: unknown) => log(`catchup: dropping the database: ${String(error)}`));
  };
  try {
    log(`catchup: appending ${events.toLocaleString('en-US')} events to ${config.KAFKA_TOPIC}`);
    const filled = await fillLog(runtime, events, log);
    log(`catchup: appended in ${filled.seconds.toFixed(1)} s (${Math.round(filled.eventsPerS)} events/s)`);
    const stages = options.profile ? new StageTimer() : undefined;
    const caught = await catchUp(runtime, events, stages, log);
    log(
      `catchup: applied in ${caught.seconds.toFixed(1)} s (${Math.round(caught.eventsPerS)} events/s, ` +
        `node CPU ${Math.round(caught.nodeCpuShare * 100)}% of one core)`,
    );
    const [sizes] = await runtime.database.dataSource.query(
      `SELECT (SELECT count(*) FROM ${quoteIdent(runtime.database.schema)}.subscriptions)::int AS subscriptions,
              (SELECT count(*) FROM ${quoteIdent(runtime.database.schema)}.subscription_guids)::int AS guids,
              (SELECT count(*) FROM ${quoteIdent(runtime.database.schema)}.request_outcomes)::int AS outcomes`,
    );
    const bulk = await bulkBaseline(database.url, runtime.database.schema, log);
    const baselineEventsPerS = events / bulk.seconds;
    const rateRatio = ratio(caught.eventsPerS, baselineEventsPerS);
    log(`catchup: baseline wrote ${bulk.rows} rows in ${bulk.seconds.toFixed(1)} s; ratio ${rateRatio}`);
    const profile = stages
      ? Object.fromEntries(
          Object.entries(stages.ms)
            .sort((a, b) => b[1] - a[1])
            .map(([stage, ms]) => [
              stage,
              { total_s: round(ms / 1000), ms_per_batch: round(ms / caught.batches, 2) },
            ]),
        )
      : undefined;
    const rows: SummaryRow[] = [
      {
        scenario: 'catchup',
        metric: `${events.toLocaleString('en-US')} events from offset 0`,
        unit: 'events/s',
        measured: round(caught.eventsPerS, 1),
        baseline: round(baselineEventsPerS, 1),
        ratio: rateRatio,
        target: '≥ 0.5',
        met: rateRatio >= 0.5,
      },
      {
        scenario: 'catchup',
        metric: `p99 of one batch (≤ ${config.PROJECTOR_BATCH_SIZE} events) / one ${BULK_ROWS}-row statement`,
        unit: 'ms',
        measured: caught.batchLatency.p99_ms,
        baseline: bulk.statementLatency.p99_ms,
        // Different units of work: shown, not compared.
        ratio: Number.NaN,
      },
    ];
    const outcome: ScenarioOutcome = {
      name: 'catchup',
      result: {
        description:
          'N events appended to a fresh topic; a fresh projection schema applies them from offset 0 through the ' +
          "projector's consume loop (batches of PROJECTOR_BATCH_SIZE, every partition at once, batches that arrive together in one transaction, up to 4 transactions in flight). " +
          'Baseline: the resulting rows of every projected table written into an empty copy of the schema with raw ' +
          'INSERT … SELECT FROM unnest … ON CONFLICT, 4 statements at a time.',
        settings: {
          events,
          users: Math.max(200, Math.round(events / 50)),
          mix: filled.counts,
          kafka_partitions: config.KAFKA_PARTITIONS,
          projector_batch_size: config.PROJECTOR_BATCH_SIZE,
          baseline_rows_per_statement: BULK_ROWS,
          baseline_writers: BULK_WRITERS,
          instrumented: options.profile,
        },
        append: { seconds: round(filled.seconds, 2), events_per_s: round(filled.eventsPerS, 1) },
        measured: {
          seconds: round(caught.seconds, 2),
          group_join_s: round(caught.joinSeconds, 2),
          node_cpu_share: round(caught.nodeCpuShare, 2),
          events_per_s: round(caught.eventsPerS, 1),
          batches: caught.batches,
          mean_batch_events: round(caught.meanBatch, 1),
          batch_latency: caught.batchLatency,
          resulting_rows: sizes,
        },
        baseline: {
          seconds: round(bulk.seconds, 2),
          rows: bulk.rows,
          events_per_s_equivalent: round(baselineEventsPerS, 1),
          statement_latency: bulk.statementLatency,
        },
        throughput_ratio_vs_baseline: rateRatio,
        targets: { throughput_ratio_min: 0.5, throughput_met: rateRatio >= 0.5 },
        ...(profile ? { profile_by_stage: profile } : {}),
      },
      rows,
      chart: {
        title: 'catchup: a fresh projection from offset 0',
        subtitle: `${events.toLocaleString('en-US')} events (${filled.counts.items.toLocaleString('en-US')} POSTed items), 12 partitions, Kafka → PostgreSQL`,
        panels: [
          {
            title: 'throughput',
            unit: 'events/s',
            groups: [
              {
                label: 'events applied per second',
                bars: [
                  { series: 'castlog', value: caught.eventsPerS },
                  { series: 'baseline (raw bulk upsert)', value: baselineEventsPerS },
                ],
              },
            ],
          },
          {
            title: 'latency per batch / statement',
            unit: 'ms',
            groups: (['p50_ms', 'p95_ms', 'p99_ms'] as const).map((key) => ({
              label: key.replace('_ms', ''),
              bars: [
                { series: 'castlog', value: caught.batchLatency[key] },
                { series: 'baseline (raw bulk upsert)', value: bulk.statementLatency[key] },
              ],
            })),
          },
        ],
      },
    };
    return {
      outcome,
      fixture: {
        runtime,
        liveSchema: runtime.database.schema,
        events,
        catchupEventsPerS: caught.eventsPerS,
        close,
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}
