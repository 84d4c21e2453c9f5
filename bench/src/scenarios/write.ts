import Fastify, { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { BenchInfra } from '../infra';
import {
  ApplyTotals,
  benchConfig,
  createDatabase,
  deleteTopics,
  HistogramTotals,
  histogramMeans,
  startCastlog,
  uniqueName,
} from '../castlog';
import { recordBytesSince, rowsPerEvent, tableWrites, topicDiskBytes, total } from '../footprint';
import { LoadResult, LoadSpec, runLoad } from '../load';
import { ScenarioOutcome, SummaryRow } from '../report';
import { alternate, Round } from '../rounds';
import { formatSpread, LatencySummary, ratio, round, Spread, spreadOf, summarize } from '../stats';
import { targetOf } from '../targets';

export interface WriteOptions {
  readonly concurrency: number;
  /** Measured time of each system per phase, split evenly over the rounds. */
  readonly durationMs: number;
  /** Unmeasured time at the start of every round, for each system. */
  readonly warmupMs: number;
  /** The unmeasured pass of single POSTs before any phase, for each system alike. */
  readonly warmupPassMs: number;
  /** Each phase alternates baseline and castlog this many times (the order flips every round), so
   * a machine whose speed drifts during the run weighs on both alike. */
  readonly rounds: number;
  /** castlog settings given with `--set` (`castlogSettings`). */
  readonly castlogSettings: Record<string, string>;
  readonly log: (line: string) => void;
}

/** Where a castlog request's time went, from castlog's own histograms (means over the phase). */
interface Stages {
  readonly http_ms: number;
  readonly append_ms: number;
  readonly read_your_writes_wait_ms: number;
  readonly projector_batch_apply_ms: number;
  /** The transaction that applied an event, averaged over events (see ApplyTotals). */
  readonly projector_apply_per_event_ms: number;
  readonly projector_batch_events: number;
  readonly projector_batches: number;
}

/** One system's figures in one round. */
export interface RoundFigures extends LatencySummary {
  readonly requests_per_s: number;
  readonly items_per_s: number;
  readonly requests: number;
  readonly errors: number;
  readonly statuses: Record<string, number>;
  readonly first_error?: string;
}

/** One system's figures over the rounds: each the median of the rounds, with min and max. */
export interface PhaseFigures {
  readonly requests_per_s: Spread;
  readonly items_per_s: Spread;
  readonly mean_ms: Spread;
  readonly p50_ms: Spread;
  readonly p95_ms: Spread;
  readonly p99_ms: Spread;
  readonly requests: number;
  readonly errors: number;
  readonly statuses: Record<string, number>;
  readonly first_error?: string;
}

interface Phase {
  readonly measured: PhaseFigures;
  readonly baseline: PhaseFigures;
  readonly throughput_ratio: Spread;
  readonly p50_ratio: Spread;
  readonly p99_ratio: Spread;
  readonly rounds: readonly (Round<RoundFigures> & {
    readonly throughput_ratio: number;
    readonly p99_ratio: number;
  })[];
  readonly stages: Stages;
  readonly timePerRequest: Record<string, number>;
  readonly footprint: Record<string, unknown>;
}

/** A load round's figures, `items` the items (or actions) each request carries. */
export const figures = (result: LoadResult, items: number): RoundFigures => {
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

export const overRounds = (rounds: readonly RoundFigures[]): PhaseFigures => {
  const statuses: Record<string, number> = {};
  for (const figures of rounds)
    for (const [status, count] of Object.entries(figures.statuses))
      statuses[status] = (statuses[status] ?? 0) + count;
  const firstError = rounds.find((figures) => figures.first_error)?.first_error;
  const spread = (key: 'requests_per_s' | 'items_per_s' | 'mean_ms' | 'p50_ms' | 'p95_ms' | 'p99_ms') =>
    spreadOf(rounds.map((figures) => figures[key]));
  return {
    requests_per_s: spread('requests_per_s'),
    items_per_s: spread('items_per_s'),
    mean_ms: spread('mean_ms'),
    p50_ms: spread('p50_ms'),
    p95_ms: spread('p95_ms'),
    p99_ms: spread('p99_ms'),
    requests: rounds.reduce((sum, figures) => sum + figures.requests, 0),
    errors: rounds.reduce((sum, figures) => sum + figures.errors, 0),
    statuses,
    ...(firstError ? { first_error: firstError } : {}),
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

/** The baseline: plain Fastify, one route doing the same add as one set-based upsert straight into
 * PostgreSQL (match by user and feed url, else insert with a new guid), no log, no projector, no
 * authentication (the user id comes in a header). */
export async function startBaseline(
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
 * projector in this process, Bearer tokens, read-your-writes) and to the bare baseline route, in
 * rounds that alternate the two. */
export async function writeScenario(infra: BenchInfra, options: WriteOptions): Promise<ScenarioOutcome> {
  const { log } = options;
  const database = await createDatabase(infra.databaseUrl, uniqueName('castlog_bench_write'));
  const config = benchConfig(database.url, infra.kafkaBrokers, options.castlogSettings);
  const castlog = await startCastlog(config);
  const baseline = await startBaseline(database.url, config.DATABASE_POOL_SIZE);
  const stats = new Pool({ connectionString: database.url, max: 1 });
  try {
    const users = await castlog.addUsers(options.concurrency);
    const runId = uniqueName('w');
    const schema = castlog.runtime.database.schema;
    const { eventLog } = castlog.runtime;
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
    // (JIT): a start-up cost, not castlog's steady state. Both systems get the same unmeasured pass.
    log(`write: warming the baseline up for ${options.warmupPassMs / 1000} s`);
    await runLoad(load(baseline.port, 1, plain, options.warmupPassMs, 'warmup'));
    log(`write: warming castlog and the broker up for ${options.warmupPassMs / 1000} s`);
    await runLoad(load(castlog.port, 1, bearer, options.warmupPassMs, 'warmup'));
    const phases: Record<string, Phase> = {};
    for (const items of [1, 100]) {
      const name = items === 1 ? 'single' : `batch_${items}`;
      let stageTotals: Record<string, HistogramTotals> = {};
      let applied: ApplyTotals = { transactions: 0, events: 0, eventSeconds: 0 };
      const offsetsBefore = await eventLog.endOffsets();
      const writesBefore = await tableWrites(stats, schema);
      const diskBefore = topicDiskBytes(infra.kafkaLogDir, config.KAFKA_TOPIC);
      const rounds = await alternate(options.rounds, async (side, n) => {
        if (side === 'baseline') {
          log(`write: ${name}: round ${n}: baseline, ${options.concurrency} clients for ${roundMs / 1000} s`);
          return figures(await runLoad(load(baseline.port, items, plain, roundMs, `${n}`)), items);
        }
        log(`write: ${name}: round ${n}: castlog`);
        // castlog's histograms over the measured window only, as the load generator's figures.
        let before: Promise<Record<string, HistogramTotals>> = castlog.histograms();
        let appliesBefore = castlog.applies();
        const result = await runLoad(load(castlog.port, items, bearer, roundMs, `${n}`), () => {
          before = castlog.histograms();
          appliesBefore = castlog.applies();
        });
        stageTotals = added(stageTotals, await before, await castlog.histograms());
        const appliesAfter = castlog.applies();
        applied = {
          transactions: applied.transactions + appliesAfter.transactions - appliesBefore.transactions,
          events: applied.events + appliesAfter.events - appliesBefore.events,
          eventSeconds: applied.eventSeconds + appliesAfter.eventSeconds - appliesBefore.eventSeconds,
        };
        return figures(result, items);
      });
      const writesAfter = await tableWrites(stats, schema);
      const offsetsAfter = await eventLog.endOffsets();
      const diskAfter = topicDiskBytes(infra.kafkaLogDir, config.KAFKA_TOPIC);
      const events = total(offsetsAfter) - total(offsetsBefore);
      const record = await recordBytesSince(eventLog, offsetsBefore);
      const footprint = {
        description:
          "Over the whole phase, per event appended (the rounds' warm-ups included): rows written to the " +
          "read model (pg_stat_user_tables: inserted + updated + deleted) and the event's bytes in the log " +
          "(key, JSON value and headers as sent; and the topic's segment files on disk, batch framing included, " +
          'where the broker runs here).',
        ...rowsPerEvent(writesBefore, writesAfter, events),
        log_bytes_per_event: record.events > 0 ? round(record.bytes / record.events, 1) : Number.NaN,
        ...(diskBefore !== undefined && diskAfter !== undefined
          ? {
              log_disk_bytes_per_event: events > 0 ? round((diskAfter - diskBefore) / events, 1) : Number.NaN,
            }
          : {
              log_disk_bytes_per_event: null,
              log_disk_note: 'the broker does not run from a known directory here',
            }),
      };
      const withRatios = rounds.map((r) => ({
        ...r,
        throughput_ratio: ratio(r.castlog.requests_per_s, r.baseline.requests_per_s),
        p50_ratio: ratio(r.castlog.p50_ms, r.baseline.p50_ms),
        p99_ratio: ratio(r.castlog.p99_ms, r.baseline.p99_ms),
      }));
      const measured = overRounds(rounds.map((r) => r.castlog));
      const base = overRounds(rounds.map((r) => r.baseline));
      const means = histogramMeans({}, stageTotals);
      const mean = (metric: string, scale = 1000) => round((means[metric]?.mean ?? Number.NaN) * scale, 2);
      const applyPerEvent =
        applied.events > 0 ? round((applied.eventSeconds / applied.events) * 1000, 2) : Number.NaN;
      const stages: Stages = {
        http_ms: mean('castlog_http_request_duration_seconds'),
        append_ms: mean('castlog_event_append_duration_seconds'),
        read_your_writes_wait_ms: mean('castlog_read_your_writes_wait_seconds'),
        projector_batch_apply_ms: mean('castlog_projector_batch_apply_seconds'),
        projector_apply_per_event_ms: applyPerEvent,
        projector_batch_events: mean('castlog_projector_batch_size', 1),
        projector_batches: means.castlog_projector_batch_apply_seconds?.count ?? 0,
      };
      const clientMean = round(
        rounds.reduce((sum, r) => sum + r.castlog.mean_ms * r.castlog.count, 0) /
          Math.max(
            1,
            rounds.reduce((sum, r) => sum + r.castlog.count, 0),
          ),
        2,
      );
      const timePerRequest = {
        client_round_trip: clientMean,
        outside_handler: round(clientMean - stages.http_ms, 2),
        handler: stages.http_ms,
        append: stages.append_ms,
        wait_for_projector: round(Math.max(0, stages.read_your_writes_wait_ms - applyPerEvent), 2),
        apply: applyPerEvent,
        answer: round(stages.http_ms - stages.append_ms - stages.read_your_writes_wait_ms, 2),
      };
      phases[name] = {
        measured,
        baseline: base,
        throughput_ratio: spreadOf(withRatios.map((r) => r.throughput_ratio)),
        p50_ratio: spreadOf(withRatios.map((r) => r.p50_ratio)),
        p99_ratio: spreadOf(withRatios.map((r) => r.p99_ratio)),
        rounds: withRatios,
        stages,
        timePerRequest,
        footprint,
      };
      log(`write: ${name}: castlog stage means ${JSON.stringify(stages)}`);
      log(`write: ${name}: time per request (ms) ${JSON.stringify(timePerRequest)}`);
      log(
        `write: ${name}: ${footprint.rows_written_per_event} rows written and ${footprint.log_bytes_per_event} bytes in the log per event`,
      );
      log(
        `write: ${name}: castlog ${formatSpread(measured.requests_per_s)} req/s, p99 ${formatSpread(measured.p99_ms)} ms ` +
          `(${measured.errors} errors); baseline ${formatSpread(base.requests_per_s)} req/s, p99 ${formatSpread(base.p99_ms)} ms; ` +
          `throughput ratio ${formatSpread(phases[name].throughput_ratio)}, by round ${withRatios.map((r) => r.throughput_ratio).join(', ')}`,
      );
    }
    const single = phases.single as Phase;
    const batch = phases.batch_100 as Phase;
    const throughputTarget = targetOf('write.single.throughput');
    const p99Target = targetOf('write.single.p99');
    const batchTarget = targetOf('write.batch_100.throughput');
    const row = (
      metric: string,
      unit: string,
      measured: Spread,
      baseline: Spread,
      ratios: Spread,
      target?: { text: string; met: (value: number) => boolean },
    ): SummaryRow => ({
      scenario: 'write',
      metric,
      unit,
      measured: measured.median,
      baseline: baseline.median,
      ratio: ratios.median,
      ratio_rounds: ratios,
      ...(target ? { target: target.text, met: target.met(ratios.median) } : {}),
    });
    const roundsOf = (phase: Phase, key: 'p50_ms' | 'p95_ms') =>
      spreadOf(phase.rounds.map((r) => ratio(r.castlog[key], r.baseline[key])));
    const rows: SummaryRow[] = [
      row(
        'single POST throughput',
        'req/s',
        single.measured.requests_per_s,
        single.baseline.requests_per_s,
        single.throughput_ratio,
        throughputTarget,
      ),
      row('single POST p50', 'ms', single.measured.p50_ms, single.baseline.p50_ms, single.p50_ratio),
      row(
        'single POST p95',
        'ms',
        single.measured.p95_ms,
        single.baseline.p95_ms,
        roundsOf(single, 'p95_ms'),
      ),
      row(
        'single POST p99',
        'ms',
        single.measured.p99_ms,
        single.baseline.p99_ms,
        single.p99_ratio,
        p99Target,
      ),
      row(
        'batch-100 POST throughput',
        'items/s',
        batch.measured.items_per_s,
        batch.baseline.items_per_s,
        batch.throughput_ratio,
        batchTarget,
      ),
      row('batch-100 POST p99', 'ms', batch.measured.p99_ms, batch.baseline.p99_ms, batch.p99_ratio),
    ];
    const section = (phase: Phase) => ({
      measured: phase.measured,
      baseline: phase.baseline,
      throughput_ratio: phase.throughput_ratio,
      p50_ratio: phase.p50_ratio,
      p99_ratio: phase.p99_ratio,
      throughput_ratio_by_round: phase.rounds.map((r) => r.throughput_ratio),
      p99_ratio_by_round: phase.rounds.map((r) => r.p99_ratio),
      rounds: phase.rounds,
      castlog_stage_means: phase.stages,
      time_per_request_ms: phase.timePerRequest,
      footprint: phase.footprint,
    });
    const latencyGroups = (phase: Phase) =>
      (['p50_ms', 'p95_ms', 'p99_ms'] as const).map((key) => ({
        label: key.replace('_ms', ''),
        bars: [
          { series: 'castlog', value: phase.measured[key].median },
          { series: 'baseline (bare Fastify + upsert)', value: phase.baseline[key].median },
        ],
      }));
    return {
      name: 'write',
      result: {
        description:
          'Concurrent HTTP clients POST /v1/subscriptions with Bearer tokens to API+projector in one process ' +
          '(append to Kafka, projector applies, read-your-writes wait, outcome answered) vs a bare Fastify route ' +
          'doing INSERT … ON CONFLICT straight into PostgreSQL. Each phase alternates the two in rounds (the order ' +
          'flips every round); every figure is the median of the rounds with min and max, every ratio the median ' +
          "of the rounds' ratios.",
        settings: {
          concurrency: options.concurrency,
          users: users.length,
          duration_s: options.durationMs / 1000,
          rounds: options.rounds,
          round_s: roundMs / 1000,
          warmup_s: options.warmupMs / 1000,
          warmup_pass_s: options.warmupPassMs / 1000,
          warmup_pass_systems: ['baseline', 'castlog'],
          kafka_partitions: config.KAFKA_PARTITIONS,
          database_pool_size: config.DATABASE_POOL_SIZE,
          projector_batch_size: config.PROJECTOR_BATCH_SIZE,
        },
        single: section(single),
        batch_100: section(batch),
        throughput_ratio_vs_baseline: single.throughput_ratio.median,
        p99_ratio_vs_baseline: single.p99_ratio.median,
        batch_100_throughput_ratio_vs_baseline: batch.throughput_ratio.median,
        batch_100_p99_ratio_vs_baseline: batch.p99_ratio.median,
        ratios: {
          throughput: single.throughput_ratio,
          p99: single.p99_ratio,
          batch_100_throughput: batch.throughput_ratio,
          batch_100_p99: batch.p99_ratio,
        },
      },
      rows,
      chart: {
        title: 'write: POST /v1/subscriptions, castlog vs bare Fastify + upsert',
        subtitle: `${options.concurrency} concurrent clients, ${options.rounds} alternating rounds of ${roundMs / 1000} s per system and phase (medians), 127.0.0.1`,
        panels: [
          {
            title: 'single-item POST throughput',
            unit: 'requests/s',
            groups: [
              {
                label: 'single item',
                bars: [
                  { series: 'castlog', value: single.measured.requests_per_s.median },
                  {
                    series: 'baseline (bare Fastify + upsert)',
                    value: single.baseline.requests_per_s.median,
                  },
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
                  { series: 'castlog', value: batch.measured.items_per_s.median },
                  { series: 'baseline (bare Fastify + upsert)', value: batch.baseline.items_per_s.median },
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
    await stats.end().catch(() => undefined);
    await baseline.close().catch((error: unknown) => log(`write: closing the baseline: ${String(error)}`));
    await castlog.close().catch((error: unknown) => log(`write: closing castlog: ${String(error)}`));
    await deleteTopics(infra.kafkaBrokers, [config.KAFKA_TOPIC]).catch(() => undefined);
    await database.drop().catch((error: unknown) => log(`write: dropping the database: ${String(error)}`));
  }
}
