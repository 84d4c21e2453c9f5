import { AuthStore } from '@castlog/auth';
import { randomBytes } from 'node:crypto';
import { cpuUsage } from 'node:process';
import { BenchInfra } from '../infra';
import { benchConfig, createDatabase, deleteTopics, startCastlog, uniqueName } from '../castlog';
import { ScenarioOutcome, SummaryRow } from '../report';
import { alternate, Side } from '../rounds';
import { formatSpread, LatencySummary, ratio, round, since, Spread, spreadOf, summarize } from '../stats';
import { targetOf } from '../targets';

export interface GpodderOptions {
  /** Clients syncing at once, each as a user of its own. */
  readonly clients: number;
  /** Incremental syncs of each client after its first sync. */
  readonly syncs: number;
  /** Alternating cookie / Basic rounds. */
  readonly rounds: number;
  /** castlog settings given with `--set` (`castlogSettings`). */
  readonly castlogSettings: Record<string, string>;
  readonly log: (line: string) => void;
}

/** How a client proves who it is: Kasts sends Basic credentials on every request (and its cookie
 * jar sends the session cookie back); AntennaPod logs in once and then sends the cookie alone. */
type Pattern = 'basic' | 'cookie';
/** The cookie pattern is the baseline the Basic pattern is held against. */
const patternOf = (side: Side): Pattern => (side === 'baseline' ? 'cookie' : 'basic');

const FIRST_UPLOAD_FEEDS = 200;
const FIRST_ACTIONS = 300;
/** Kasts uploads episode actions in batches of 30 (maxAmountEpisodeUploads). */
const ACTION_BATCH = 30;

interface BenchAccount {
  readonly name: string;
  readonly password: string;
}

interface WorkloadFigures extends LatencySummary {
  readonly requests_per_s: number;
  /** CPU time of this process (castlog and the clients) per request. */
  readonly cpu_ms_per_request: number;
  /** Password checks (scrypt) castlog ran. */
  readonly password_checks: number;
  readonly errors: number;
  readonly first_error?: string;
}

/** One client's connection to castlog: its credentials, its cookie jar, and what it measured. */
class SyncClient {
  private cookie: string | undefined;
  readonly device = 'bench-device';

  constructor(
    private readonly baseUrl: string,
    readonly account: BenchAccount,
    private readonly pattern: Pattern,
    private readonly record: (ms: number, error?: string) => void,
  ) {}

  private get basic(): string {
    return `Basic ${Buffer.from(`${this.account.name}:${this.account.password}`).toString('base64')}`;
  }

  /** Sends one request as the pattern does, keeps the session cookie it is given, and answers the
   * JSON body (undefined for an empty one or a failure, which is recorded). */
  async send(method: 'GET' | 'POST', path: string, body?: unknown, basic = false): Promise<unknown> {
    const headers: Record<string, string> = {};
    if (this.pattern === 'basic' || basic) headers.authorization = this.basic;
    if (this.cookie) headers.cookie = this.cookie;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const begin = performance.now();
    try {
      const response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      const session = response.headers
        .getSetCookie()
        .map((line) => /^sessionid=([^;]+)/.exec(line)?.[1])
        .find((value) => value !== undefined);
      if (session) this.cookie = `sessionid=${session}`;
      const error = response.status === 200 ? undefined : `${method} ${path} → ${response.status} ${text}`;
      this.record(since(begin), error);
      return error || text === '' ? undefined : JSON.parse(text);
    } catch (error) {
      this.record(since(begin), `${method} ${path}: ${String(error)}`);
      return undefined;
    }
  }
}

const timestampOf = (answer: unknown): number =>
  typeof (answer as { timestamp?: unknown } | undefined)?.timestamp === 'number'
    ? (answer as { timestamp: number }).timestamp
    : 0;

const feedsOf = (account: BenchAccount, from: number, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `https://feeds.bench.example/${account.name}/${from + i}.xml`);

/** `count` play actions on the account's first feeds, as Kasts uploads them. */
function actions(client: SyncClient, from: number, count: number): Record<string, unknown>[] {
  const feeds = feedsOf(client.account, 0, 10);
  return Array.from({ length: count }, (_, i) => ({
    podcast: feeds[(from + i) % feeds.length],
    episode: `https://media.bench.example/${client.account.name}/${from + i}.mp3`,
    guid: `${client.account.name}-${from + i}`,
    device: client.device,
    action: 'play',
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, from + i)).toISOString().slice(0, 19),
    started: 0,
    position: 60,
    total: 1800,
  }));
}

/** A client's life: (log in,) register the device, the first sync (download, a 200-feed upload,
 * 300 episode actions in batches of 30), then `syncs` incremental syncs of a feed and a batch. */
async function clientLife(client: SyncClient, pattern: Pattern, syncs: number): Promise<void> {
  const { name } = client.account;
  const subscriptions = `/api/2/subscriptions/${name}/${client.device}.json`;
  const episodes = `/api/2/episodes/${name}.json`;
  if (pattern === 'cookie') await client.send('POST', `/api/2/auth/${name}/login.json`, undefined, true);
  await client.send('POST', `/api/2/devices/${name}/${client.device}.json`, {
    caption: 'bench',
    type: 'laptop',
  });
  let subscriptionsSince = timestampOf(await client.send('GET', `${subscriptions}?since=0`));
  await client.send('POST', subscriptions, {
    add: feedsOf(client.account, 0, FIRST_UPLOAD_FEEDS),
    remove: [],
  });
  let episodesSince = timestampOf(await client.send('GET', `${episodes}?since=0&aggregated=true`));
  for (let from = 0; from < FIRST_ACTIONS; from += ACTION_BATCH)
    await client.send('POST', episodes, actions(client, from, ACTION_BATCH));
  for (let sync = 0; sync < syncs; sync += 1) {
    subscriptionsSince = timestampOf(
      await client.send('GET', `${subscriptions}?since=${subscriptionsSince}`),
    );
    const feed = feedsOf(client.account, FIRST_UPLOAD_FEEDS + sync, 1);
    await client.send('POST', subscriptions, { add: feed, remove: [] });
    episodesSince = timestampOf(
      await client.send('GET', `${episodes}?since=${episodesSince}&aggregated=false`),
    );
    await client.send('POST', episodes, actions(client, FIRST_ACTIONS + sync * ACTION_BATCH, ACTION_BATCH));
  }
}

/** Counts the password checks (scrypt) castlog runs in this process until `stop`. */
function countPasswordChecks(): { readonly count: number; stop(): void } {
  const prototype = AuthStore.prototype;
  const original = Object.getOwnPropertyDescriptor(prototype, 'authenticatePassword')!;
  const check = prototype.authenticatePassword;
  const counter = {
    count: 0,
    stop: () => Object.defineProperty(prototype, 'authenticatePassword', original),
  };
  prototype.authenticatePassword = function (this: AuthStore, name: string, password: string) {
    counter.count += 1;
    return check.call(this, name, password);
  };
  return counter;
}

/** Every account's client living its life at once, in `pattern`; what they measured together. */
async function runWorkload(
  port: number,
  accounts: readonly BenchAccount[],
  pattern: Pattern,
  syncs: number,
): Promise<WorkloadFigures> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const record = (ms: number, error?: string) => {
    latencies.push(ms);
    if (error === undefined) return;
    errors += 1;
    firstError ??= error.slice(0, 300);
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  const passwordChecks = countPasswordChecks();
  const cpuBefore = cpuUsage();
  const start = performance.now();
  try {
    await Promise.all(
      accounts.map((account) =>
        clientLife(new SyncClient(baseUrl, account, pattern, record), pattern, syncs),
      ),
    );
  } finally {
    passwordChecks.stop();
  }
  const elapsedS = since(start) / 1000;
  const cpu = cpuUsage(cpuBefore);
  return {
    ...summarize(latencies),
    requests_per_s: round((latencies.length - errors) / elapsedS, 1),
    cpu_ms_per_request: round((cpu.user + cpu.system) / 1000 / Math.max(1, latencies.length)),
    password_checks: passwordChecks.count,
    errors,
    ...(firstError ? { first_error: firstError } : {}),
  };
}

/** `count` new users with a password each, hashed at the production cost (what a Basic request
 * without the cache would pay). */
async function addAccounts(store: AuthStore, count: number): Promise<BenchAccount[]> {
  const prefix = uniqueName('gp');
  const accounts: BenchAccount[] = [];
  for (let i = 0; i < count; i += 1) {
    const account = { name: `${prefix}_${i}`, password: randomBytes(12).toString('base64url') };
    await store.addUser(account.name, account.password);
    accounts.push(account);
  }
  return accounts;
}

/** Kasts-like clients (Basic on every request) against AntennaPod-like ones (the session cookie
 * after one login), each a user of its own doing a first sync and incremental syncs over the
 * gpodder.net API; rounds alternate the two on one castlog. */
export async function gpodderScenario(infra: BenchInfra, options: GpodderOptions): Promise<ScenarioOutcome> {
  const { log } = options;
  const database = await createDatabase(infra.databaseUrl, uniqueName('castlog_bench_gpodder'));
  const config = benchConfig(database.url, infra.kafkaBrokers, options.castlogSettings);
  const castlog = await startCastlog(config);
  try {
    const store = new AuthStore(castlog.runtime.database.dataSource);
    const rounds = (
      await alternate(options.rounds, async (side, n) => {
        const pattern = patternOf(side);
        const accounts = await addAccounts(store, options.clients);
        log(
          `gpodder: round ${n}: ${options.clients} clients, ${pattern === 'basic' ? 'Basic on every request' : 'the cookie after login'}`,
        );
        return runWorkload(castlog.port, accounts, pattern, options.syncs);
      })
    ).map((r) => ({
      ...r,
      throughput_ratio: ratio(r.castlog.requests_per_s, r.baseline.requests_per_s),
      p50_ratio: ratio(r.castlog.p50_ms, r.baseline.p50_ms),
    }));
    return gpodderOutcome(options, rounds, config.TOKEN_CACHE_TTL);
  } finally {
    await castlog.close().catch((error: unknown) => log(`gpodder: closing castlog: ${String(error)}`));
    await deleteTopics(infra.kafkaBrokers, [config.KAFKA_TOPIC]).catch(() => undefined);
    await database.drop().catch((error: unknown) => log(`gpodder: dropping the database: ${String(error)}`));
  }
}

type GpodderRound = Awaited<ReturnType<typeof alternate<WorkloadFigures>>>[number] & {
  readonly throughput_ratio: number;
  readonly p50_ratio: number;
};

/** One side's figures over the rounds: medians with min and max, and totals. */
function overRounds(rounds: readonly GpodderRound[], side: Side) {
  return {
    requests_per_s: spreadOf(
      rounds.map((r) => r[side].requests_per_s),
      1,
    ),
    cpu_ms_per_request: spreadOf(rounds.map((r) => r[side].cpu_ms_per_request)),
    password_checks: rounds.reduce((sum, r) => sum + r[side].password_checks, 0),
    mean_ms: spreadOf(rounds.map((r) => r[side].mean_ms)),
    p50_ms: spreadOf(rounds.map((r) => r[side].p50_ms)),
    p99_ms: spreadOf(rounds.map((r) => r[side].p99_ms)),
    requests: rounds.reduce((sum, r) => sum + r[side].count, 0),
    errors: rounds.reduce((sum, r) => sum + r[side].errors, 0),
    first_error: rounds.find((r) => r[side].first_error)?.[side].first_error,
  };
}

type SideOverRounds = ReturnType<typeof overRounds>;

/** The summary table's rows: throughput (the target's figure), p50 and CPU per request. */
function gpodderRows(
  basic: SideOverRounds,
  cookie: SideOverRounds,
  throughput: Spread,
  p50: Spread,
): SummaryRow[] {
  const target = targetOf('gpodder.basic.throughput');
  const row = (metric: string, unit: string, key: 'requests_per_s' | 'p50_ms' | 'cpu_ms_per_request') => ({
    scenario: 'gpodder',
    metric: `Basic on every request / cookie, ${metric}`,
    unit,
    measured: basic[key].median,
    baseline: cookie[key].median,
  });
  return [
    {
      ...row('throughput', 'req/s', 'requests_per_s'),
      ratio: throughput.median,
      ratio_rounds: throughput,
      target: target.text,
      met: target.met(throughput.median),
    },
    { ...row('p50', 'ms', 'p50_ms'), ratio: p50.median, ratio_rounds: p50 },
    {
      ...row('CPU per request', 'ms', 'cpu_ms_per_request'),
      ratio: ratio(basic.cpu_ms_per_request.median, cookie.cpu_ms_per_request.median),
    },
  ];
}

/** The medians of the rounds, the JSON section, the table rows and the chart. */
function gpodderOutcome(
  options: GpodderOptions,
  rounds: readonly GpodderRound[],
  tokenCacheTtlMs: number,
): ScenarioOutcome {
  const basic = overRounds(rounds, 'castlog');
  const cookie = overRounds(rounds, 'baseline');
  const throughputRatio = spreadOf(rounds.map((r) => r.throughput_ratio));
  const p50Ratio = spreadOf(rounds.map((r) => r.p50_ratio));
  const errors = basic.errors + cookie.errors;
  options.log(
    `gpodder: Basic ${formatSpread(basic.requests_per_s)} req/s, cookie ${formatSpread(cookie.requests_per_s)} req/s, ` +
      `ratio ${formatSpread(throughputRatio)}; password checks: Basic ${basic.password_checks}, cookie ${cookie.password_checks}` +
      (errors ? ` (errors: ${basic.first_error ?? cookie.first_error})` : ''),
  );
  return {
    name: 'gpodder',
    result: {
      description:
        'Clients of the gpodder.net API, each a user of its own: register the device, a first sync (download, ' +
        `a ${FIRST_UPLOAD_FEEDS}-feed upload, ${FIRST_ACTIONS} episode actions in batches of ${ACTION_BATCH}), then ` +
        'incremental syncs (download, one feed, download, a batch of actions). castlog: Kasts-like clients sending ' +
        'Basic credentials on every request (and the cookie their jar keeps). Baseline: AntennaPod-like clients ' +
        'logging in once and sending the session cookie alone. Rounds alternate the two (B C, C B, …); figures ' +
        'are medians of the rounds with min and max; CPU is this process’s (castlog and the clients).',
      settings: {
        clients: options.clients,
        incremental_syncs: options.syncs,
        rounds: options.rounds,
        token_cache_ttl_ms: tokenCacheTtlMs,
      },
      measured: basic,
      baseline: cookie,
      rounds,
      throughput_ratio: throughputRatio,
      p50_ratio: p50Ratio,
      throughput_ratio_vs_baseline: throughputRatio.median,
    },
    rows: gpodderRows(basic, cookie, throughputRatio, p50Ratio),
    chart: gpodderChart(options, basic, cookie),
  };
}

type SideFigures = Record<'requests_per_s' | 'p50_ms' | 'p99_ms' | 'cpu_ms_per_request', { median: number }>;

function gpodderChart(
  options: GpodderOptions,
  basic: SideFigures,
  cookie: SideFigures,
): ScenarioOutcome['chart'] {
  const bars = (key: keyof SideFigures) => [
    { series: 'Basic on every request (Kasts)', value: basic[key].median },
    { series: 'cookie after login (AntennaPod)', value: cookie[key].median },
  ];
  return {
    title: 'gpodder: Basic credentials on every request against the session cookie',
    subtitle: `${options.clients} clients, a first sync and ${options.syncs} incremental syncs each; medians of ${options.rounds} rounds`,
    panels: [
      {
        title: 'throughput',
        unit: 'req/s',
        groups: [{ label: 'requests per second', bars: bars('requests_per_s') }],
      },
      {
        title: 'latency and CPU',
        unit: 'ms',
        groups: [
          { label: 'p50', bars: bars('p50_ms') },
          { label: 'p99', bars: bars('p99_ms') },
          { label: 'CPU per request', bars: bars('cpu_ms_per_request') },
        ],
      },
    ],
  };
}
