import { Client } from 'pg';
import { MAX_PER_PAGE } from '../../../apps/api/src/subscriptions/subscriptions.request';
import { SUBSCRIPTIONS_PER_PAGE } from '../../../apps/api/src/web/subscriptions.page';
import { WEB_SESSION_COOKIE } from '../../../apps/api/src/web/web-session';
import { WebClient } from '../../../test/support/web-client';
import {
  benchConfig,
  BenchUser,
  createDatabase,
  deleteTopics,
  RunningCastlog,
  startCastlog,
  subscribeOverHttp,
  uniqueName,
} from '../castlog';
import { BenchInfra } from '../infra';
import { ScenarioOutcome, SummaryRow } from '../report';
import { formatSpread, since, Spread } from '../stats';
import { targetOf } from '../targets';
import { Answer, checkSubscriptionsPage, checkV1Page } from '../web-answers';
import { compareWithStatement, measureGets } from './listing';

export interface WebOptions {
  /** The user's subscriptions (the target is for 5,000). */
  readonly subscriptions: number;
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

/** What the issue compares the page with; `/v1` serves at most MAX_PER_PAGE of them. */
const V1_PATH = '/v1/subscriptions?per_page=5000';
const WEB_PATH = '/web/subscriptions';

const DESCRIPTION =
  'One user with N subscriptions (POSTed over HTTP in batches of 100). Measured: GET /web/subscriptions, ' +
  'the subscriptions page rendered on the server (newest change first, 100 rows, feed titles from the ' +
  'catalog), with the castlog_web cookie of one sign-in. Baseline: GET /v1/subscriptions?per_page=5000 ' +
  `with a Bearer token for the same user; /v1 serves a per_page above ${MAX_PER_PAGE} as ${MAX_PER_PAGE}, so ` +
  'both sides answer 100 subscriptions. Concurrent clients repeat their GET in a closed loop. Rounds ' +
  'alternate the two (B C, C B, …); figures are medians of the rounds with min and max.';

/** Signs in once through the sign-in form, as a browser does: the `castlog_web` cookie. */
async function signIn(castlog: RunningCastlog, user: BenchUser): Promise<string> {
  const browser = new WebClient(`http://127.0.0.1:${castlog.port}`);
  const answer = await browser.signIn(user);
  const session = browser.cookies.get(WEB_SESSION_COOKIE);
  if (answer.status !== 303 || !session)
    throw new Error(`web: signing in answered ${answer.status} and ${session ? 'a' : 'no'} session cookie`);
  return `${WEB_SESSION_COOKIE}=${session}`;
}

async function answerOf(port: number, path: string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers, redirect: 'manual' });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: await response.text(),
  };
}

interface Compared {
  readonly measured: Record<'requests_per_s' | 'p50_ms' | 'p95_ms' | 'p99_ms', Spread>;
  readonly baseline: Record<'requests_per_s' | 'p50_ms' | 'p95_ms' | 'p99_ms', Spread>;
  readonly p50Ratio: Spread;
  readonly p99Ratio: Spread;
  readonly throughputRatio: Spread;
}

function rowsOf({ measured, baseline, p50Ratio, p99Ratio, throughputRatio }: Compared): SummaryRow[] {
  const target = targetOf('web.p50');
  const row = (metric: string, unit: string, key: keyof Compared['measured'], ratios: Spread) => ({
    scenario: 'web',
    metric: `page of 100 (web ÷ /v1 per_page=5000, served as 100), ${metric}`,
    unit,
    measured: measured[key].median,
    baseline: baseline[key].median,
    ratio: ratios.median,
    ratio_rounds: ratios,
  });
  return [
    row('throughput', 'req/s', 'requests_per_s', throughputRatio),
    { ...row('p50', 'ms', 'p50_ms', p50Ratio), target: target.text, met: target.met(p50Ratio.median) },
    row('p99', 'ms', 'p99_ms', p99Ratio),
  ];
}

function chartOf({ measured, baseline }: Compared, options: WebOptions): ScenarioOutcome['chart'] {
  const series = { castlog: 'GET /web/subscriptions', baseline: 'GET /v1/subscriptions (100 served)' };
  return {
    title: 'web: the subscriptions page against GET /v1/subscriptions?per_page=5000',
    subtitle: `1 user, ${options.subscriptions.toLocaleString('en-US')} subscriptions, 100 a page on both sides, ${options.concurrency} clients; medians of ${options.rounds} rounds`,
    panels: [
      {
        title: 'throughput',
        unit: 'req/s',
        groups: [
          {
            label: 'pages per second',
            bars: [
              { series: series.castlog, value: measured.requests_per_s.median },
              { series: series.baseline, value: baseline.requests_per_s.median },
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
            { series: series.castlog, value: measured[key].median },
            { series: series.baseline, value: baseline[key].median },
          ],
        })),
      },
    ],
  };
}

/** One user with 5,000 subscriptions: the subscriptions page (`castlog_web` cookie) against
 * `GET /v1/subscriptions?per_page=5000` (Bearer token), in alternating rounds. */
export async function webScenario(infra: BenchInfra, options: WebOptions): Promise<ScenarioOutcome> {
  const { log } = options;
  const database = await createDatabase(infra.databaseUrl, uniqueName('castlog_bench_web'));
  const config = benchConfig(database.url, infra.kafkaBrokers, options.castlogSettings);
  const castlog = await startCastlog(config);
  try {
    const [user] = await castlog.addUsers(1);
    if (!user) throw new Error('no user');
    const started = performance.now();
    await subscribeOverHttp(castlog.port, user, 'web', 0, options.subscriptions);
    log(
      `web: ${options.subscriptions} subscriptions added over HTTP in ${(since(started) / 1000).toFixed(1)} s`,
    );
    const analyze = new Client({ connectionString: database.url });
    await analyze.connect();
    await analyze.query('ANALYZE').finally(() => analyze.end());

    const bearer = { authorization: `Bearer ${user.token}` };
    const cookie = { cookie: await signIn(castlog, user) };
    const shown = Math.min(options.subscriptions, SUBSCRIPTIONS_PER_PAGE, MAX_PER_PAGE);
    checkSubscriptionsPage(await answerOf(castlog.port, WEB_PATH, cookie), {
      rows: shown,
      total: options.subscriptions,
    });
    checkV1Page(await answerOf(castlog.port, V1_PATH, bearer), {
      subscriptions: shown,
      total: options.subscriptions,
    });

    const roundMs = options.durationMs / options.rounds;
    const timing = { concurrency: options.concurrency, roundMs, warmupMs: options.warmupMs };
    const compared = await compareWithStatement(options.rounds, (side, n) => {
      log(
        `web: round ${n}: ${side === 'baseline' ? `baseline GET ${V1_PATH}` : `castlog GET ${WEB_PATH}`}, ${options.concurrency} clients for ${roundMs / 1000} s`,
      );
      return measureGets(castlog.port, {
        ...timing,
        headers: side === 'baseline' ? bearer : cookie,
        paths: [side === 'baseline' ? V1_PATH : WEB_PATH],
      });
    });
    const { rounds, measured, baseline, p99Ratio, p50Ratio, throughputRatio, firstError } = compared;
    const errors = measured.errors + baseline.errors;
    log(
      `web: page p50 ${formatSpread(measured.p50_ms)} ms, /v1 p50 ${formatSpread(baseline.p50_ms)} ms, ratio ${formatSpread(p50Ratio)}; ` +
        `p99 ratio ${formatSpread(p99Ratio)}${errors ? ` (${errors} errors: ${firstError ?? rounds.find((r) => r.baseline.first_error)?.baseline.first_error})` : ''}`,
    );
    return {
      name: 'web',
      result: {
        description: DESCRIPTION,
        settings: {
          subscriptions: options.subscriptions,
          web_path: WEB_PATH,
          baseline_path: V1_PATH,
          rows_per_page: shown,
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
        p50_ratio: p50Ratio,
        p99_ratio: p99Ratio,
        throughput_ratio: throughputRatio,
        p50_ratio_vs_baseline: p50Ratio.median,
        p99_ratio_vs_baseline: p99Ratio.median,
        throughput_ratio_vs_baseline: throughputRatio.median,
      },
      rows: rowsOf(compared),
      chart: chartOf(compared, options),
    };
  } finally {
    await castlog.close().catch((error: unknown) => log(`web: closing castlog: ${String(error)}`));
    await deleteTopics(infra.kafkaBrokers, [config.KAFKA_TOPIC]).catch(() => undefined);
    await database.drop().catch((error: unknown) => log(`web: dropping the database: ${String(error)}`));
  }
}
