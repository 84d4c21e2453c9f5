import { Pool } from 'pg';
import { BenchInfra } from '../infra';
import {
  benchConfig,
  createDatabase,
  deleteTopics,
  startCastlog,
  subscribeOverHttp,
  uniqueName,
} from '../castlog';
import { runLoad } from '../load';
import { ScenarioOutcome } from '../report';
import { alternate, Side } from '../rounds';
import { formatSpread, LatencySummary, ratio, round, since, spreadOf, summarize } from '../stats';
import { targetOf } from '../targets';

export interface ListingFigures extends LatencySummary {
  readonly requests_per_s: number;
  readonly errors: number;
  readonly first_error?: string;
}

export interface ListingOptions {
  readonly subscriptions: number;
  /** How many of them change after `since` (so pages of 100 cover them). */
  readonly afterSince: number;
  readonly concurrency: number;
  /** Measured time of each side, split evenly over the rounds. */
  readonly durationMs: number;
  readonly warmupMs: number;
  /** Alternating baseline / castlog rounds. */
  readonly rounds: number;
  /** castlog settings given with `--set` (`castlogSettings`). */
  readonly castlogSettings: Record<string, string>;
  readonly log: (line: string) => void;
}

/** The list query of SubscriptionsQuery.list (libs/read-model/src/queries/subscriptions.query.ts)
 * with `since` given and a page by number (one row more than the page, no cursor), as it sends it:
 * the baseline runs this statement alone. */
const listSql = (s: string) =>
  `SELECT * FROM (
     SELECT sub.id, sub.feed_url, sub.is_subscribed, sub.subscription_changed, sub.guid_changed, sub.deleted,
            sub.merged_into, sub.latest_guid,
            coalesce((SELECT g.guid FROM ${s}.subscription_guids g
                       WHERE g.user_id = sub.user_id AND g.subscription_id = sub.id AND g.since <= $2
                       ORDER BY g.position DESC LIMIT 1), sub.id) AS shown_guid,
            sub.change_time, count(*) OVER () AS total
       FROM ${s}.subscriptions sub
      WHERE sub.user_id = $1 AND ($2::bigint IS NULL OR sub.change_time > $2::bigint)
   ) listed
    WHERE $5::bigint IS NULL OR (listed.change_time, listed.shown_guid) > ($5::bigint, $6::uuid)
    ORDER BY listed.change_time, listed.shown_guid
    LIMIT $3 OFFSET $4`;

/** How each round of a listing comparison runs: `concurrency` clients, each in a closed loop, for
 * `roundMs` after `warmupMs` unmeasured. */
interface ListingRound {
  readonly concurrency: number;
  readonly roundMs: number;
  readonly warmupMs: number;
}

/** One round of a statement alone on the pool, as the route's query sends it: client `c` asks for
 * page `(c + sequence × concurrency) mod pages`, as the load's clients cycle their paths. */
export async function measureStatement(
  pool: Pool,
  spec: ListingRound & {
    /** Names the statement in the error thrown when a page finds nothing. */
    readonly what: string;
    readonly sql: string;
    readonly params: (page: number) => unknown[];
    readonly pages: number;
  },
): Promise<ListingFigures> {
  const samples: number[] = [];
  const start = performance.now();
  const measureFrom = start + spec.warmupMs;
  const stopAt = measureFrom + spec.roundMs;
  let lastEnd = measureFrom;
  await Promise.all(
    Array.from({ length: spec.concurrency }, async (_, client) => {
      for (let sequence = 0; ; sequence += 1) {
        const begin = performance.now();
        if (begin >= stopAt) return;
        const page = (client + sequence * spec.concurrency) % spec.pages;
        const { rows } = await pool.query(spec.sql, spec.params(page));
        if (rows.length === 0) throw new Error(`${spec.what} found nothing`);
        const end = performance.now();
        if (begin < measureFrom) continue;
        samples.push(end - begin);
        lastEnd = Math.max(lastEnd, end);
      }
    }),
  );
  return {
    ...summarize(samples),
    requests_per_s: round(samples.length / ((lastEnd - measureFrom) / 1000), 1),
    errors: 0,
  };
}

/** One round of castlog's GETs of `paths` over HTTP (the load's worker thread). */
export async function measureGets(
  port: number,
  spec: ListingRound & { readonly headers: Record<string, string>; readonly paths: readonly string[] },
): Promise<ListingFigures> {
  const load = await runLoad({
    port,
    concurrency: spec.concurrency,
    durationMs: spec.roundMs,
    warmupMs: spec.warmupMs,
    clientHeaders: [spec.headers],
    request: { kind: 'get', paths: spec.paths },
    expectStatus: 200,
  });
  return {
    ...summarize(load.latenciesMs),
    requests_per_s: round((load.measured - load.errors) / (load.elapsedMs / 1000), 1),
    errors: load.errors,
    ...(load.firstError ? { first_error: load.firstError } : {}),
  };
}

/** Rounds alternating the statement alone (baseline) and castlog's GETs: each round with its
 * ratios, each side's figures over the rounds (medians with min and max) and the ratios'. */
export async function compareWithStatement(
  rounds: number,
  measure: (side: Side, round: number) => Promise<ListingFigures>,
) {
  const measuredRounds = (await alternate(rounds, measure)).map((r) => ({
    ...r,
    p99_ratio: ratio(r.castlog.p99_ms, r.baseline.p99_ms),
    p50_ratio: ratio(r.castlog.p50_ms, r.baseline.p50_ms),
    throughput_ratio: ratio(r.castlog.requests_per_s, r.baseline.requests_per_s),
  }));
  const over = (side: Side) => ({
    requests_per_s: spreadOf(
      measuredRounds.map((r) => r[side].requests_per_s),
      1,
    ),
    mean_ms: spreadOf(measuredRounds.map((r) => r[side].mean_ms)),
    p50_ms: spreadOf(measuredRounds.map((r) => r[side].p50_ms)),
    p95_ms: spreadOf(measuredRounds.map((r) => r[side].p95_ms)),
    p99_ms: spreadOf(measuredRounds.map((r) => r[side].p99_ms)),
    requests: measuredRounds.reduce((sum, r) => sum + r[side].count, 0),
    errors: measuredRounds.reduce((sum, r) => sum + r[side].errors, 0),
  });
  return {
    rounds: measuredRounds,
    measured: over('castlog'),
    baseline: over('baseline'),
    p99Ratio: spreadOf(measuredRounds.map((r) => r.p99_ratio)),
    p50Ratio: spreadOf(measuredRounds.map((r) => r.p50_ratio)),
    throughputRatio: spreadOf(measuredRounds.map((r) => r.throughput_ratio)),
    firstError: measuredRounds.find((r) => r.castlog.first_error)?.castlog.first_error,
  };
}

/** One user with 10,000 subscriptions, `since` near the end: GET pages of 100 over HTTP (Bearer
 * token), against the list statement alone on a pool of the same size. */
export async function listingScenario(infra: BenchInfra, options: ListingOptions): Promise<ScenarioOutcome> {
  const { log } = options;
  const database = await createDatabase(infra.databaseUrl, uniqueName('castlog_bench_listing'));
  const config = benchConfig(database.url, infra.kafkaBrokers, options.castlogSettings);
  const castlog = await startCastlog(config);
  const pool = new Pool({ connectionString: database.url, max: config.DATABASE_POOL_SIZE });
  try {
    const [user] = await castlog.addUsers(1);
    if (!user) throw new Error('no user');
    const before = options.subscriptions - options.afterSince;
    const fill = performance.now();
    await subscribeOverHttp(castlog.port, user, 'listing', 0, before);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const sinceMs = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await subscribeOverHttp(castlog.port, user, 'listing', before, options.subscriptions);
    log(
      `listing: ${options.subscriptions} subscriptions added over HTTP in ${(since(fill) / 1000).toFixed(1)} s`,
    );
    await pool.query(
      `ANALYZE "${config.READ_MODEL_SCHEMA}".subscriptions, "${config.READ_MODEL_SCHEMA}".subscription_guids`,
    );

    const pages = Math.ceil(options.afterSince / 100);
    const sinceText = new Date(sinceMs).toISOString();
    const paths = Array.from(
      { length: pages },
      (_, i) => `/v1/subscriptions?since=${encodeURIComponent(sinceText)}&page=${i + 1}&per_page=100`,
    );
    // Check once that the pages hold what they should.
    const first = (await (
      await fetch(`http://127.0.0.1:${castlog.port}${paths[0]}`, {
        headers: { authorization: `Bearer ${user.token}` },
      })
    ).json()) as { total: number; subscriptions: unknown[] };
    if (
      first.total !== options.afterSince ||
      first.subscriptions.length !== Math.min(100, options.afterSince)
    )
      throw new Error(
        `listing: expected ${options.afterSince} changed subscriptions, the API answered ${first.total}`,
      );

    const sql = listSql(`"${config.READ_MODEL_SCHEMA}"`);
    const roundMs = options.durationMs / options.rounds;
    const timing = { concurrency: options.concurrency, roundMs, warmupMs: options.warmupMs };
    const { rounds, measured, baseline, p99Ratio, p50Ratio, throughputRatio, firstError } =
      await compareWithStatement(options.rounds, (side, n) => {
        log(
          `listing: round ${n}: ${side === 'baseline' ? 'baseline (the list statement alone)' : 'castlog GET over HTTP'}, ${options.concurrency} clients for ${roundMs / 1000} s`,
        );
        return side === 'baseline'
          ? measureStatement(pool, {
              ...timing,
              what: 'listing: the baseline statement',
              sql,
              params: (page) => [user.id, sinceMs, 101, page * 100, null, null],
              pages,
            })
          : measureGets(castlog.port, {
              ...timing,
              headers: { authorization: `Bearer ${user.token}` },
              paths,
            });
      });
    log(
      `listing: castlog p99 ${formatSpread(measured.p99_ms)} ms, baseline p99 ${formatSpread(baseline.p99_ms)} ms, ` +
        `ratio ${formatSpread(p99Ratio)}${measured.errors ? ` (${measured.errors} errors: ${firstError})` : ''}`,
    );
    const target = targetOf('listing.p99');
    return {
      name: 'listing',
      result: {
        description:
          'One user with N subscriptions; GET /v1/subscriptions?since=…&page=k&per_page=100 over HTTP with a Bearer ' +
          'token, `since` such that the last few pages changed after it, pages cycled by concurrent clients. ' +
          'Baseline: the list statement of SubscriptionsQuery.list alone on a pg pool of the same size. Rounds ' +
          'alternate the two (B C, C B, …); figures are medians of the rounds with min and max.',
        settings: {
          subscriptions: options.subscriptions,
          changed_after_since: options.afterSince,
          pages,
          per_page: 100,
          concurrency: options.concurrency,
          duration_s: options.durationMs / 1000,
          rounds: options.rounds,
          round_s: roundMs / 1000,
          warmup_s: options.warmupMs / 1000,
          database_pool_size: config.DATABASE_POOL_SIZE,
        },
        measured: { ...measured, ...(firstError ? { first_error: firstError } : {}) },
        baseline,
        rounds,
        p99_ratio: p99Ratio,
        p50_ratio: p50Ratio,
        throughput_ratio: throughputRatio,
        p99_ratio_vs_baseline: p99Ratio.median,
        p50_ratio_vs_baseline: p50Ratio.median,
        throughput_ratio_vs_baseline: throughputRatio.median,
      },
      rows: [
        {
          scenario: 'listing',
          metric: 'GET page of 100, throughput',
          unit: 'req/s',
          measured: measured.requests_per_s.median,
          baseline: baseline.requests_per_s.median,
          ratio: throughputRatio.median,
          ratio_rounds: throughputRatio,
        },
        {
          scenario: 'listing',
          metric: 'GET page of 100, p50',
          unit: 'ms',
          measured: measured.p50_ms.median,
          baseline: baseline.p50_ms.median,
          ratio: p50Ratio.median,
          ratio_rounds: p50Ratio,
        },
        {
          scenario: 'listing',
          metric: 'GET page of 100, p99',
          unit: 'ms',
          measured: measured.p99_ms.median,
          baseline: baseline.p99_ms.median,
          ratio: p99Ratio.median,
          ratio_rounds: p99Ratio,
          target: target.text,
          met: target.met(p99Ratio.median),
        },
      ],
      chart: {
        title: 'listing: GET /v1/subscriptions?since=… pages of 100',
        subtitle: `1 user, ${options.subscriptions.toLocaleString('en-US')} subscriptions, ${options.afterSince} after since, ${options.concurrency} clients; medians of ${options.rounds} rounds`,
        panels: [
          {
            title: 'throughput',
            unit: 'req/s',
            groups: [
              {
                label: 'pages per second',
                bars: [
                  { series: 'castlog (HTTP)', value: measured.requests_per_s.median },
                  { series: 'baseline (SQL alone)', value: baseline.requests_per_s.median },
                ],
              },
            ],
          },
          {
            title: 'latency',
            unit: 'ms',
            groups: (['p50_ms', 'p95_ms', 'p99_ms'] as const).map((key) => ({
              label: key.replace('_ms', ''),
              bars: [
                { series: 'castlog (HTTP)', value: measured[key].median },
                { series: 'baseline (SQL alone)', value: baseline[key].median },
              ],
            })),
          },
        ],
      },
    };
  } finally {
    await pool.end().catch(() => undefined);
    await castlog.close().catch((error: unknown) => log(`listing: closing castlog: ${String(error)}`));
    await deleteTopics(infra.kafkaBrokers, [config.KAFKA_TOPIC]).catch(() => undefined);
    await database.drop().catch((error: unknown) => log(`listing: dropping the database: ${String(error)}`));
  }
}
