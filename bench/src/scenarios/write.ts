import Fastify, { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { BenchInfra } from '../infra';
import {
  benchConfig,
  createDatabase,
  deleteTopics,
  HistogramTotals,
  histogramMeans,
  startCastlog,
  uniqueName,
} from '../castlog';
import { LoadResult, LoadSpec, runLoad } from '../load';
import { ScenarioOutcome, SummaryRow } from '../report';
import { LatencySummary, ratio, round, summarize } from '../stats';

export interface WriteOptions {
  readonly concurrency: number;
  /** Measured time of each system per phase, split evenly over the rounds. */
  readonly durationMs: number;
  readonly warmupMs: number;
  /** The unmeasured castlog pass before any phase. */
  readonly warmupPassMs: number;
  /** Each phase alternates baseline and castlog this many times (the order flips every round), so
   * a machine whose speed drifts during the run weighs on both alike. */
  readonly rounds: number;
  readonly log: (line: string) => void;
}

/** Where a castlog request's time went, from castlog's own histograms (means over the phase). */
interface Stages {
  readonly http_ms: number;
  readonly append_ms: number;
  readonly read_your_writes_wait_ms: number;
  readonly projector_batch_apply_ms: number;
  readonly projector_batch_events: number;
  readonly projector_batches: number;
}

interface Phase {
  readonly measured: PhaseFigures;
  readonly baseline: PhaseFigures;
  readonly stages: Stages;
  /** castlog / baseline throughput of each round. */
  readonly roundRatios: readonly number[];
}

interface PhaseFigures extends LatencySummary {
  readonly requests_per_s: number;
  readonly items_per_s: number;
  readonly requests: number;
  readonly errors: number;
  readonly statuses: Record<string, number>;
  readonly first_error?: string;
}

/** Several runs of one system as one: requests, time and latencies added up. */
const combined = (results: readonly LoadResult[]): LoadResult => {
  const statuses: Record<string, number> = {};
  for (const result of results)
    for (const [status, count] of Object.entries(result.statuses))
      statuses[status] = (statuses[status] ?? 0) + count;
  const firstError = results.find((result) => result.firstError)?.firstError;
  const latencies = new Float64Array(results.reduce((n, result) => n + result.latenciesMs.length, 0));
  let at = 0;
  for (const result of results) {
    latencies.set(result.latenciesMs, at);
    at += result.latenciesMs.length;
  }
  return {
    latenciesMs: latencies,
    elapsedMs: results.reduce((sum, result) => sum + result.elapsedMs, 0),
    measured: results.reduce((sum, result) => sum + result.measured, 0),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    statuses,
    ...(firstError ? { firstError } : {}),
  };
};

const added = (
  totals: Record<string, HistogramTotals>,
  before: Record<string, HistogramTotals>,
  after: Record<string, HistogramTotals>,
): Record<string, HistogramTotals> =>
  Object.fromEntries(
    Object.entries(after).map(([name, { sum, count }]) => [
      name,
      {
        sum: (totals[name]?.sum ?? 0) + sum - (before[name]?.sum ?? 0),
        count: (totals[name]?.count ?? 0) + count - (before[name]?.count ?? 0),
      },
    ]),
  );

const figures = (result: LoadResult, items: number): PhaseFigures => {
  const seconds = result.elapsedMs / 1000;
  const ok = result.measured - result.errors;
  return {
    requests_per_s: round(seconds > 0 ? ok / seconds : 0, 1),
    items_per_s: round(seconds > 0 ? (ok * items) / seconds : 0, 1),
    requests: result.measured,
    errors: result.errors,
    statuses: result.statuses,
    ...(result.firstError ? { first_error: result.firstError } : {}),
    ...summarize(result.latenciesMs),
  };
};

/** The baseline: plain Fastify, one route doing the same add as one set-based upsert straight into
 * PostgreSQL (match by user and feed url, else insert with a new guid), no log, no projector, no
 * authentication (the user id comes in a header). */
async function startBaseline(
  databaseUrl: string,
  poolSize: number,
): Promise<{ port: number; close(): Promise<void> }> {
  const pool = new Pool({ connectionString: databaseUrl, max: poolSize });
  await pool.query(`CREATE SCHEMA IF NOT EXISTS bench_baseline`);
  await pool.query(`
    CREATE TABLE IF NOT EXISTS bench_baseline.subscriptions (
      user_id text NOT NULL,
      feed_url text NOT NULL,
      id uuid NOT NULL,
      is_subscribed boolean NOT NULL,
      subscription_changed bigint NOT NULL,
      PRIMARY KEY (user_id, feed_url)
    )`);
  const app: FastifyInstance = Fastify({ bodyLimit: 1024 * 1024 });
  app.post('/v1/subscriptions', async (request, reply) => {
    const userId = request.headers['x-user-id'];
    const body = request.body as { subscriptions?: { feed_url?: unknown; guid?: unknown }[] };
    if (typeof userId !== 'string' || !Array.isArray(body?.subscriptions) || body.subscriptions.length === 0)
      return reply.code(400).send({ code: '400', message: 'bad request' });
    const urls = body.subscriptions.map((item) => String(item.feed_url));
    const guids = body.subscriptions.map((item) =>
      typeof item.guid === 'string' ? item.guid : randomUUID(),
    );
    const { rows } = await pool.query<{ feed_url: string; id: string }>(
      `INSERT INTO bench_baseline.subscriptions (user_id, feed_url, id, is_subscribed, subscription_changed)
       SELECT $1, u.feed_url, u.id, true, $4 FROM unnest($2::text[], $3::uuid[]) AS u(feed_url, id)
       ON CONFLICT (user_id, feed_url) DO UPDATE
         SET is_subscribed = true, subscription_changed = EXCLUDED.subscription_changed
       RETURNING feed_url, id`,
      [userId, urls, guids, Date.now()],
    );
    return { success: rows.map((row) => ({ feed_url: row.feed_url, guid: row.id })), failure: [] };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

/** 64 (by default) concurrent clients POST single items, then batches of 100, to castlog (API and
 * projector in this process, Bearer tokens, read-your-writes) and to the bare baseline route. */
export async function writeScenario(infra: BenchInfra, options: WriteOptions): Promise<ScenarioOutcome> {
  const { log } = options;
  const database = await createDatabase(infra.databaseUrl, uniqueName('castlog_bench_write'));
  const config = benchConfig(database.url, infra.kafkaBrokers);
  const castlog = await startCastlog(config);
  const baseline = await startBaseline(database.url, config.DATABASE_POOL_SIZE);
  try {
    const users = await castlog.addUsers(options.concurrency);
    const runId = uniqueName('w');
    const load = (
      port: number,
      items: number,
      headers: Record<string, string>[],
      durationMs: number,
      run: string,
    ): LoadSpec => ({
      port,
      concurrency: options.concurrency,
      durationMs,
      warmupMs: options.warmupMs,
      clientHeaders: headers,
      request: { kind: 'add', path: '/v1/subscriptions', items, runId: `${runId}_${port}_${items}_${run}` },
      expectStatus: 200,
    });
    const bearer = users.map((user) => ({ authorization: `Bearer ${user.token}` }));
    const plain = users.map((user) => ({ 'x-user-id': user.id }));
    const roundMs = options.durationMs / options.rounds;
    // A broker just started spends its first minute of load compiling its produce and fetch paths
    // (JIT): a start-up cost, not castlog's steady state, so an unmeasured pass takes it first.
    log(`write: warming castlog and the broker up for ${options.warmupPassMs / 1000} s`);
    await runLoad(load(castlog.port, 1, bearer, options.warmupPassMs, 'warmup'));
    const phases: Record<string, Phase> = {};
    for (const items of [1, 100]) {
      const name = items === 1 ? 'single' : `batch_${items}`;
      const runs = { castlog: [] as LoadResult[], baseline: [] as LoadResult[] };
      let stageTotals: Record<string, HistogramTotals> = {};
      const roundRatios: number[] = [];
      for (let round = 1; round <= options.rounds; round += 1) {
        const measureBaseline = async () => {
          log(
            `write: ${name}: round ${round}: baseline, ${options.concurrency} clients for ${roundMs / 1000} s`,
          );
          runs.baseline.push(await runLoad(load(baseline.port, items, plain, roundMs, `${round}`)));
        };
        const measureCastlog = async () => {
          log(`write: ${name}: round ${round}: castlog`);
          const before = await castlog.histograms();
          runs.castlog.push(await runLoad(load(castlog.port, items, bearer, roundMs, `${round}`)));
          stageTotals = added(stageTotals, before, await castlog.histograms());
        };
        if (round % 2 === 1) {
          await measureBaseline();
          await measureCastlog();
        } else {
          await measureCastlog();
          await measureBaseline();
        }
        roundRatios.push(
          ratio(
            figures(runs.castlog.at(-1) as LoadResult, items).requests_per_s,
            figures(runs.baseline.at(-1) as LoadResult, items).requests_per_s,
          ),
        );
      }
      const measured = figures(combined(runs.castlog), items);
      const base = figures(combined(runs.baseline), items);
      const means = histogramMeans({}, stageTotals);
      const mean = (metric: string, scale = 1000) => round((means[metric]?.mean ?? Number.NaN) * scale, 2);
      const stages: Stages = {
        http_ms: mean('castlog_http_request_duration_seconds'),
        append_ms: mean('castlog_event_append_duration_seconds'),
        read_your_writes_wait_ms: mean('castlog_read_your_writes_wait_seconds'),
        projector_batch_apply_ms: mean('castlog_projector_batch_apply_seconds'),
        projector_batch_events: mean('castlog_projector_batch_size', 1),
        projector_batches: means.castlog_projector_batch_apply_seconds?.count ?? 0,
      };
      phases[name] = { measured, baseline: base, stages, roundRatios };
      log(`write: ${name}: castlog stage means ${JSON.stringify(stages)}`);
      log(
        `write: ${name}: castlog ${measured.requests_per_s} req/s p99 ${measured.p99_ms} ms (${measured.errors} errors); ` +
          `baseline ${base.requests_per_s} req/s p99 ${base.p99_ms} ms; throughput ratio by round ${roundRatios.join(', ')}`,
      );
    }
    const single = phases.single as Phase;
    const batch = phases.batch_100 as Phase;
    const throughputRatio = ratio(single.measured.requests_per_s, single.baseline.requests_per_s);
    const p99Ratio = ratio(single.measured.p99_ms, single.baseline.p99_ms);
    const batchThroughputRatio = ratio(batch.measured.items_per_s, batch.baseline.items_per_s);
    const batchP99Ratio = ratio(batch.measured.p99_ms, batch.baseline.p99_ms);
    const rows: SummaryRow[] = [
      {
        scenario: 'write',
        metric: 'single POST throughput',
        unit: 'req/s',
        measured: single.measured.requests_per_s,
        baseline: single.baseline.requests_per_s,
        ratio: throughputRatio,
        target: '≥ 0.5',
        met: throughputRatio >= 0.5,
      },
      {
        scenario: 'write',
        metric: 'single POST p50',
        unit: 'ms',
        measured: single.measured.p50_ms,
        baseline: single.baseline.p50_ms,
        ratio: ratio(single.measured.p50_ms, single.baseline.p50_ms),
      },
      {
        scenario: 'write',
        metric: 'single POST p95',
        unit: 'ms',
        measured: single.measured.p95_ms,
        baseline: single.baseline.p95_ms,
        ratio: ratio(single.measured.p95_ms, single.baseline.p95_ms),
      },
      {
        scenario: 'write',
        metric: 'single POST p99',
        unit: 'ms',
        measured: single.measured.p99_ms,
        baseline: single.baseline.p99_ms,
        ratio: p99Ratio,
        target: '≤ 4',
        met: p99Ratio <= 4,
      },
      {
        scenario: 'write',
        metric: 'batch-100 POST throughput',
        unit: 'items/s',
        measured: batch.measured.items_per_s,
        baseline: batch.baseline.items_per_s,
        ratio: batchThroughputRatio,
      },
      {
        scenario: 'write',
        metric: 'batch-100 POST p99',
        unit: 'ms',
        measured: batch.measured.p99_ms,
        baseline: batch.baseline.p99_ms,
        ratio: batchP99Ratio,
      },
    ];
    const latencyGroups = (phase: { measured: PhaseFigures; baseline: PhaseFigures }) =>
      (['p50_ms', 'p95_ms', 'p99_ms'] as const).map((key) => ({
        label: key.replace('_ms', ''),
        bars: [
          { series: 'castlog', value: phase.measured[key] },
          { series: 'baseline (bare Fastify + upsert)', value: phase.baseline[key] },
        ],
      }));
    return {
      name: 'write',
      result: {
        description:
          'Concurrent HTTP clients POST /v1/subscriptions with Bearer tokens to API+projector in one process ' +
          '(append to Kafka, projector applies, read-your-writes wait, outcome answered) vs a bare Fastify route ' +
          'doing INSERT … ON CONFLICT straight into PostgreSQL.',
        settings: {
          concurrency: options.concurrency,
          users: users.length,
          duration_s: options.durationMs / 1000,
          rounds: options.rounds,
          warmup_s: options.warmupMs / 1000,
          castlog_warmup_pass_s: options.warmupPassMs / 1000,
          kafka_partitions: config.KAFKA_PARTITIONS,
          database_pool_size: config.DATABASE_POOL_SIZE,
          projector_batch_size: config.PROJECTOR_BATCH_SIZE,
        },
        single: {
          measured: single.measured,
          baseline: single.baseline,
          castlog_stage_means: single.stages,
          throughput_ratio_by_round: single.roundRatios,
        },
        batch_100: {
          measured: batch.measured,
          baseline: batch.baseline,
          castlog_stage_means: batch.stages,
          throughput_ratio_by_round: batch.roundRatios,
        },
        throughput_ratio_vs_baseline: throughputRatio,
        p99_ratio_vs_baseline: p99Ratio,
        batch_100_throughput_ratio_vs_baseline: batchThroughputRatio,
        batch_100_p99_ratio_vs_baseline: batchP99Ratio,
        targets: {
          throughput_ratio_min: 0.5,
          throughput_met: throughputRatio >= 0.5,
          p99_ratio_max: 4,
          p99_met: p99Ratio <= 4,
        },
      },
      rows,
      chart: {
        title: 'write: POST /v1/subscriptions, castlog vs bare Fastify + upsert',
        subtitle: `${options.concurrency} concurrent clients, ${options.durationMs / 1000} s per system and phase in ${options.rounds} alternating rounds, 127.0.0.1`,
        panels: [
          {
            title: 'single-item POST throughput',
            unit: 'requests/s',
            groups: [
              {
                label: 'single item',
                bars: [
                  { series: 'castlog', value: single.measured.requests_per_s },
                  { series: 'baseline (bare Fastify + upsert)', value: single.baseline.requests_per_s },
                ],
              },
            ],
          },
          {
            title: 'batch-100 POST throughput',
            unit: 'items/s',
            groups: [
              {
                label: 'batch of 100',
                bars: [
                  { series: 'castlog', value: batch.measured.items_per_s },
                  { series: 'baseline (bare Fastify + upsert)', value: batch.baseline.items_per_s },
                ],
              },
            ],
          },
          { title: 'single-item POST latency', unit: 'ms', groups: latencyGroups(single) },
          { title: 'batch-100 POST latency', unit: 'ms', groups: latencyGroups(batch) },
        ],
      },
    };
  } finally {
    await baseline.close().catch((error: unknown) => log(`write: closing the baseline: ${String(error)}`));
    await castlog.close().catch((error: unknown) => log(`write: closing castlog: ${String(error)}`));
    await deleteTopics(infra.kafkaBrokers, [config.KAFKA_TOPIC]).catch(() => undefined);
    await database.drop().catch((error: unknown) => log(`write: dropping the database: ${String(error)}`));
  }
}
