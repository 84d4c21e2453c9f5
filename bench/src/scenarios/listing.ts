import { Pool } from 'pg';
import { BenchInfra } from '../infra';
import { benchConfig, createDatabase, deleteTopics, startCastlog, uniqueName } from '../castlog';
import { runLoad } from '../load';
import { ScenarioOutcome } from '../report';
import { ratio, round, since, summarize } from '../stats';

export interface ListingOptions {
  readonly subscriptions: number;
  /** How many of them change after `since` (so pages of 100 cover them). */
  readonly afterSince: number;
  readonly concurrency: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly log: (line: string) => void;
}

/** The list query of SubscriptionsQuery.list (libs/read-model/src/queries/subscriptions.query.ts)
 * with `since` given, as it sends it: the baseline runs this statement alone. */
const listSql = (s: string) =>
  `SELECT sub.id, sub.feed_url, sub.is_subscribed, sub.subscription_changed, sub.guid_changed, sub.deleted,
          sub.merged_into, sub.latest_guid,
          coalesce((SELECT g.guid FROM ${s}.subscription_guids g
                     WHERE g.user_id = sub.user_id AND g.subscription_id = sub.id AND g.since <= $2
                     ORDER BY g.position DESC LIMIT 1), sub.id) AS shown_guid,
          count(*) OVER () AS total
     FROM ${s}.subscriptions sub
    WHERE sub.user_id = $1 AND ($2::bigint IS NULL OR sub.change_time > $2::bigint)
    ORDER BY sub.change_time, shown_guid
    LIMIT $3 OFFSET $4`;

/** One user with 10,000 subscriptions, `since` near the end: GET pages of 100 over HTTP (Bearer
 * token), against the list statement alone on a pool of the same size. */
export async function listingScenario(infra: BenchInfra, options: ListingOptions): Promise<ScenarioOutcome> {
  const { log } = options;
  const database = await createDatabase(infra.databaseUrl, uniqueName('castlog_bench_listing'));
  const config = benchConfig(database.url, infra.kafkaBrokers);
  const castlog = await startCastlog(config);
  const pool = new Pool({ connectionString: database.url, max: config.DATABASE_POOL_SIZE });
  try {
    const [user] = await castlog.addUsers(1);
    if (!user) throw new Error('no user');
    const post = async (from: number, count: number) => {
      const response = await fetch(`http://127.0.0.1:${castlog.port}/v1/subscriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          subscriptions: Array.from({ length: count }, (_, i) => ({
            feed_url: `https://feeds.bench.example/listing/${from + i}.xml`,
          })),
        }),
      });
      if (response.status !== 200)
        throw new Error(`POST answered ${response.status}: ${await response.text()}`);
    };
    const before = options.subscriptions - options.afterSince;
    const fill = performance.now();
    for (let from = 0; from < before; from += 100) await post(from, Math.min(100, before - from));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const sinceMs = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (let from = before; from < options.subscriptions; from += 100)
      await post(from, Math.min(100, options.subscriptions - from));
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

    log(`listing: baseline (the list statement alone), ${options.concurrency} clients`);
    const sql = listSql(`"${config.READ_MODEL_SCHEMA}"`);
    const baselineMs: number[] = [];
    const start = performance.now();
    const measureFrom = start + options.warmupMs;
    const stopAt = measureFrom + options.durationMs;
    let lastEnd = measureFrom;
    await Promise.all(
      Array.from({ length: options.concurrency }, async (_, client) => {
        for (let sequence = 0; ; sequence += 1) {
          const begin = performance.now();
          if (begin >= stopAt) return;
          const page = (client + sequence * options.concurrency) % pages;
          const { rows } = await pool.query(sql, [user.id, sinceMs, 100, page * 100]);
          if (rows.length === 0) throw new Error('listing: the baseline statement found nothing');
          const end = performance.now();
          if (begin < measureFrom) continue;
          baselineMs.push(end - begin);
          lastEnd = Math.max(lastEnd, end);
        }
      }),
    );
    const baseline = {
      ...summarize(baselineMs),
      requests_per_s: round(baselineMs.length / ((lastEnd - measureFrom) / 1000), 1),
    };
    log(`listing: castlog GET over HTTP, ${options.concurrency} clients`);
    const load = await runLoad({
      port: castlog.port,
      concurrency: options.concurrency,
      durationMs: options.durationMs,
      warmupMs: options.warmupMs,
      clientHeaders: [{ authorization: `Bearer ${user.token}` }],
      request: { kind: 'get', paths },
      expectStatus: 200,
    });
    const measured = {
      ...summarize(load.latenciesMs),
      requests_per_s: round((load.measured - load.errors) / (load.elapsedMs / 1000), 1),
      errors: load.errors,
      ...(load.firstError ? { first_error: load.firstError } : {}),
    };
    const p99Ratio = ratio(measured.p99_ms, baseline.p99_ms);
    log(`listing: castlog p99 ${measured.p99_ms} ms, baseline p99 ${baseline.p99_ms} ms, ratio ${p99Ratio}`);
    return {
      name: 'listing',
      result: {
        description:
          'One user with N subscriptions; GET /v1/subscriptions?since=…&page=k&per_page=100 over HTTP with a Bearer ' +
          'token, `since` such that the last few pages changed after it, pages cycled by concurrent clients. ' +
          'Baseline: the list statement of SubscriptionsQuery.list alone on a pg pool of the same size.',
        settings: {
          subscriptions: options.subscriptions,
          changed_after_since: options.afterSince,
          pages,
          per_page: 100,
          concurrency: options.concurrency,
          duration_s: options.durationMs / 1000,
          database_pool_size: config.DATABASE_POOL_SIZE,
        },
        measured,
        baseline,
        p99_ratio_vs_baseline: p99Ratio,
        p50_ratio_vs_baseline: ratio(measured.p50_ms, baseline.p50_ms),
        throughput_ratio_vs_baseline: ratio(measured.requests_per_s, baseline.requests_per_s),
        targets: { p99_ratio_max: 2, p99_met: p99Ratio <= 2 },
      },
      rows: [
        {
          scenario: 'listing',
          metric: 'GET page of 100, throughput',
          unit: 'req/s',
          measured: measured.requests_per_s,
          baseline: baseline.requests_per_s,
          ratio: ratio(measured.requests_per_s, baseline.requests_per_s),
        },
        {
          scenario: 'listing',
          metric: 'GET page of 100, p50',
          unit: 'ms',
          measured: measured.p50_ms,
          baseline: baseline.p50_ms,
          ratio: ratio(measured.p50_ms, baseline.p50_ms),
        },
        {
          scenario: 'listing',
          metric: 'GET page of 100, p99',
          unit: 'ms',
          measured: measured.p99_ms,
          baseline: baseline.p99_ms,
          ratio: p99Ratio,
          target: '≤ 2',
          met: p99Ratio <= 2,
        },
      ],
      chart: {
        title: 'listing: GET /v1/subscriptions?since=… pages of 100',
        subtitle: `1 user, ${options.subscriptions.toLocaleString('en-US')} subscriptions, ${options.afterSince} after since, ${options.concurrency} clients`,
        panels: [
          {
            title: 'throughput',
            unit: 'req/s',
            groups: [
              {
                label: 'pages per second',
                bars: [
                  { series: 'castlog (HTTP)', value: measured.requests_per_s },
                  { series: 'baseline (SQL alone)', value: baseline.requests_per_s },
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
                { series: 'castlog (HTTP)', value: measured[key] },
                { series: 'baseline (SQL alone)', value: baseline[key] },
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
