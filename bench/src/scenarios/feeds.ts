import { Config } from '@castlog/config';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { BenchInfra } from '../infra';
import {
  BenchUser,
  benchConfig,
  createDatabase,
  deleteTopics,
  RunningCastlog,
  startCastlog,
  uniqueName,
} from '../castlog';
import {
  alternateConditions,
  batchSize,
  BusyIdleVerdict,
  busyIdleVerdict,
  Condition,
  ConditionRound,
} from '../busy-idle';
import { FEEDS_PER_HOST, feedUrlOf, hostsFor, renderFeed, sharedFeedUrl } from '../feed-fixture';
import { parseFeed } from '@castlog/feeds';
import { FeedServer, FeedServerStats, startFeedServer, statsBetween } from '../feed-server';
import { LoadSpec, runLoad } from '../load';
import { ResolverTimes, timeResolver, timesBetween } from '../resolver-timing';
import { ScenarioOutcome, SummaryRow } from '../report';
import { formatSpread, ratio, round, Spread, spreadOf } from '../stats';
import { targetOf } from '../targets';
import { figures, overRounds, PhaseFigures, RoundFigures, startBaseline } from './write';

export interface FeedsOptions {
  /** Distinct feeds resolved alone (the target is for 10,000). */
  readonly feeds: number;
  /** The write rounds' concurrent clients, each a user of its own (the write scenario's). */
  readonly concurrency: number;
  /** Measured time of each condition (baseline, castlog idle, castlog busy), split over the rounds. */
  readonly durationMs: number;
  /** Unmeasured time at the start of every load run. */
  readonly warmupMs: number;
  /** The unmeasured pass of single POSTs the baseline and castlog each get before the rounds. */
  readonly warmupPassMs: number;
  readonly rounds: number;
  /** castlog settings given with `--set` (`castlogSettings`). */
  readonly castlogSettings: Record<string, string>;
  readonly log: (line: string) => void;
}

/** The most items a /v1 POST takes (MAX_ITEMS). */
const ITEMS_PER_POST = 1000;
/** The time target for resolving 10,000 feeds, and how long the scenario waits for them at most. */
const RESOLVE_TARGET_S = 600;
const RESOLVE_LIMIT_S = 2 * RESOLVE_TARGET_S;
/** How long a busy round's batch, or the known feeds, may take to resolve before the run gives up. */
const DRAIN_LIMIT_S = 600;
const POLL_MS = 500;
/** Known feeds made ready for each client and second of a castlog load run: about twice the single
 * POSTs a second castlog has served on this machine kind (64 clients × 60 = 3,840 a second). */
const KNOWN_PER_CLIENT_S = 60;

interface Context {
  readonly castlog: RunningCastlog;
  readonly server: FeedServer;
  readonly stats: Pool;
  readonly options: FeedsOptions;
  readonly timing: ReturnType<typeof timeResolver>;
  /** parseCost(), before castlog started. */
  readonly parseMs: number;
  readonly log: (line: string) => void;
}

/** The parser's time for one of the served feeds on this thread, ms, with nothing else running. */
function parseCost(): number {
  const bodies = Array.from({ length: 600 }, (_, i) => Buffer.from(renderFeed(`/a/${i}.xml`)));
  const type = 'application/rss+xml; charset=utf-8';
  for (const body of bodies.slice(0, 200)) parseFeed(body, type);
  const started = performance.now();
  for (const body of bodies.slice(200)) parseFeed(body, type);
  return round((performance.now() - started) / 400, 3);
}

/** The catalog's rows whose url is LIKE `pattern`: how many, fetched, failed, and not yet fetched. */
async function catalogCounts(stats: Pool, pattern: string) {
  const { rows } = await stats.query<{ known: string; fetched: string; failed: string }>(
    `SELECT count(*) AS known, count(*) FILTER (WHERE outcome = 'fetched') AS fetched,
            count(*) FILTER (WHERE outcome IS NOT NULL AND outcome <> 'fetched') AS failed
       FROM castlog_feeds.feeds WHERE url LIKE $1`,
    [pattern],
  );
  const known = Number(rows[0]?.known ?? 0);
  const fetched = Number(rows[0]?.fetched ?? 0);
  const failed = Number(rows[0]?.failed ?? 0);
  return { known, fetched, failed, pending: known - fetched - failed };
}

/** Every failed row's outcome and detail, counted (a local server should leave none). */
async function failures(stats: Pool, pattern: string): Promise<Record<string, number>> {
  const { rows } = await stats.query<{ outcome: string; detail: string; count: string }>(
    `SELECT outcome, coalesce(outcome_detail, '') AS detail, count(*) AS count FROM castlog_feeds.feeds
      WHERE url LIKE $1 AND outcome IS NOT NULL AND outcome <> 'fetched' GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5`,
    [pattern],
  );
  return Object.fromEntries(rows.map((row) => [`${row.outcome}: ${row.detail}`, Number(row.count)]));
}

/** Polls until `expected` rows LIKE `pattern` are known and none is waiting for its first fetch, or
 * `limitS` pass; answers the seconds since `startedMs` (Date.now()) when it saw them so. */
async function waitResolved(
  ctx: Context,
  pattern: string,
  expected: number,
  startedMs: number,
  limitS: number,
  what: string,
): Promise<{ seconds: number; complete: boolean; fetched: number; failed: number }> {
  let reported = Date.now();
  for (;;) {
    const counts = await catalogCounts(ctx.stats, pattern);
    const seconds = (Date.now() - startedMs) / 1000;
    const complete = counts.known >= expected && counts.pending === 0;
    if (complete || seconds > limitS) {
      if (!complete)
        ctx.log(`feeds: ${what}: gave up after ${Math.round(seconds)} s (${JSON.stringify(counts)})`);
      return { seconds: round(seconds, 2), complete, fetched: counts.fetched, failed: counts.failed };
    }
    if (Date.now() - reported >= 15_000) {
      reported = Date.now();
      ctx.log(
        `feeds: ${what}: ${counts.fetched} of ${expected} fetched (${counts.known} known, ${counts.failed} failed) after ${Math.round(seconds)} s`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** POSTs `urls` to /v1/subscriptions as `user`, ITEMS_PER_POST at a time, one after another, and
 * checks that each was added. */
async function subscribe(port: number, user: BenchUser, urls: readonly string[]): Promise<void> {
  for (let first = 0; first < urls.length; first += ITEMS_PER_POST) {
    const chunk = urls.slice(first, first + ITEMS_PER_POST);
    const response = await fetch(`http://127.0.0.1:${port}/v1/subscriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: chunk.map((url) => ({ feed_url: url })) }),
    });
    const text = await response.text();
    const answer = response.status === 200 ? (JSON.parse(text) as { success?: unknown[] }) : undefined;
    if (answer?.success?.length !== chunk.length)
      throw new Error(`feeds: POST /v1/subscriptions answered ${response.status}: ${text.slice(0, 300)}`);
  }
}

/** The machine's CPU time so far (Linux /proc/stat: all cores, busy and in all), in clock ticks. */
function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      ?.trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    if (!fields || fields.length < 5) return undefined;
    const total = fields.reduce((sum, value) => sum + value, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** Where a stretch of the run spent the machine: the main thread's event loop utilisation (castlog's
 * API, projector and resolver run on it), this process's CPU in cores, the machine's busy share. */
function usageMeter() {
  const elu = performance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const machine = machineTicks();
  const startedMs = performance.now();
  return () => {
    const seconds = (performance.now() - startedMs) / 1000;
    const used = process.cpuUsage(cpu);
    const machineNow = machineTicks();
    return {
      main_thread_utilization: round(performance.eventLoopUtilization(elu).utilization),
      process_cpu_cores: round((used.user + used.system) / 1e6 / seconds),
      machine_cpu_busy:
        machine && machineNow
          ? round((machineNow.busy - machine.busy) / Math.max(1, machineNow.total - machine.total))
          : null,
    };
  };
}

/** When the feeds LIKE `pattern` were fetched, seconds after `startedMs`: the first, the 10th, 50th
 * and 90th percentiles and the last, and how many in each 10 s. */
async function fetchTimes(stats: Pool, pattern: string, startedMs: number) {
  const at = (name: string) => `round((extract(epoch FROM ${name}) * 1000 - $2) / 1000, 3)::float8`;
  const { rows } = await stats.query<
    Record<'first' | 'last' | 'p10' | 'p50' | 'p90' | 'last_learned', number>
  >(
    `SELECT ${at('min(fetched_at)')} AS first, ${at('max(fetched_at)')} AS last,
            ${at('percentile_disc(0.1) WITHIN GROUP (ORDER BY fetched_at)')} AS p10,
            ${at('percentile_disc(0.5) WITHIN GROUP (ORDER BY fetched_at)')} AS p50,
            ${at('percentile_disc(0.9) WITHIN GROUP (ORDER BY fetched_at)')} AS p90,
            ${at('max(first_seen)')} AS last_learned
       FROM castlog_feeds.feeds WHERE url LIKE $1 AND outcome = 'fetched'`,
    [pattern, startedMs],
  );
  const { rows: buckets } = await stats.query<{ bucket: number; count: string }>(
    `SELECT floor((extract(epoch FROM fetched_at) * 1000 - $2) / 10000)::int AS bucket, count(*) AS count
       FROM castlog_feeds.feeds WHERE url LIKE $1 AND outcome = 'fetched' GROUP BY 1 ORDER BY 1`,
    [pattern, startedMs],
  );
  const perTen: number[] = [];
  for (const { bucket, count } of buckets) perTen[bucket] = Number(count);
  const none = {
    first: Number.NaN,
    last: Number.NaN,
    p10: Number.NaN,
    p50: Number.NaN,
    p90: Number.NaN,
    last_learned: Number.NaN,
  };
  return { ...(rows[0] ?? none), fetched_per_10_s: Array.from(perTen, (count) => count ?? 0) };
}

/** The target's measure: `feeds` distinct feeds on the local server, subscribed by users of
 * ITEMS_PER_POST feeds each in one POST each, timed from the first POST until every catalog row
 * of theirs has outcome 'fetched'. Nothing else runs meanwhile. */
async function resolveAlone(ctx: Context) {
  const { castlog, server, options, log } = ctx;
  const users = await castlog.addUsers(Math.ceil(options.feeds / ITEMS_PER_POST));
  const urls = Array.from({ length: options.feeds }, (_, i) => feedUrlOf(server.origins, 'a', i));
  const pattern = 'http://127.0.0.1:%/a/%';
  log(
    `feeds: subscribing ${options.feeds} feeds on ${server.origins.length} ports for ${users.length} users`,
  );
  const usage = usageMeter();
  const before = await server.stats();
  const callsBefore = ctx.timing.snapshot();
  const startedMs = Date.now();
  for (const [index, user] of users.entries())
    await subscribe(castlog.port, user, urls.slice(index * ITEMS_PER_POST, (index + 1) * ITEMS_PER_POST));
  const subscribedS = (Date.now() - startedMs) / 1000;
  log(`feeds: ${options.feeds} subscriptions added in ${subscribedS.toFixed(1)} s; waiting for the resolver`);
  const done = await waitResolved(ctx, pattern, options.feeds, startedMs, RESOLVE_LIMIT_S, 'resolving');
  const used = usage();
  const calls = timesBetween(callsBefore, ctx.timing.snapshot());
  const served = statsBetween(before, await server.stats());
  const times = await fetchTimes(ctx.stats, pattern, startedMs);
  const steady = times.p90 - times.p10;
  const resolved = {
    feeds: options.feeds,
    complete: done.complete,
    seconds: done.seconds,
    fetched: done.fetched,
    failed: done.failed,
    ...(done.failed > 0 ? { failures: await failures(ctx.stats, pattern) } : {}),
    subscribe_seconds: round(subscribedS, 2),
    fetch_rate_per_s: round(done.fetched / done.seconds, 1),
    steady_rate_per_s: round((0.8 * done.fetched) / steady, 1),
    fetched_at_s: times,
    server: served,
    mean_feed_bytes: Math.round(served.bytes / Math.max(1, served.requests.a ?? 0)),
    usage: used,
    where_the_time_goes: {
      description:
        "Over the whole stretch: the resolver's calls (wall time, waits for the event loop and the pool included; " +
        "fetches in flight against FEED_CONCURRENCY), the main thread's busy time per feed fetched (castlog's API, " +
        "projector and resolver share it; the 10 POSTs' projection is in it), and the parser's time for one of " +
        'these feeds measured alone before castlog started.',
      resolver_calls: calls,
      main_thread_ms_per_fetch: round(
        (used.main_thread_utilization * done.seconds * 1000) / Math.max(1, done.fetched),
        2,
      ),
      parse_ms_per_feed_alone: ctx.parseMs,
    },
  };
  log(
    `feeds: ${done.fetched} of ${options.feeds} feeds fetched ${done.seconds} s after the first subscription ` +
      `(${resolved.fetch_rate_per_s} a second; ${resolved.steady_rate_per_s} from the 10th to the 90th percentile); ` +
      `${served.requests.a ?? 0} requests served; ${JSON.stringify(used)}`,
  );
  return resolved;
}

type Resolved = Awaited<ReturnType<typeof resolveAlone>>;

/** The castlog load runs of the write rounds (the warm-up pass, then idle and busy in each round)
 * add feeds that every client shares, known to the catalog before they run: subscribed by a user
 * of their own and fetched once, so that the write load gives the resolver nothing to fetch (each
 * new subscription of a known feed is learned and found known). Answers each run's bases. */
async function prepareKnownFeeds(ctx: Context, runs: readonly { name: string; seconds: number }[]) {
  const { castlog, server, log } = ctx;
  const [user] = await castlog.addUsers(1);
  if (!user) throw new Error('no user');
  const bases: Record<string, string[]> = {};
  const counts: Record<string, number> = {};
  const urls: string[] = [];
  for (const run of runs) {
    bases[run.name] = server.origins.map((origin) => `${origin}/w/${run.name}`);
    const count = Math.ceil(run.seconds * KNOWN_PER_CLIENT_S);
    counts[run.name] = count;
    for (let sequence = 0; sequence < count; sequence += 1)
      urls.push(sharedFeedUrl(bases[run.name] as string[], sequence, 0));
  }
  log(`feeds: making ${urls.length} feeds of the write load known to the catalog`);
  const startedMs = Date.now();
  await subscribe(castlog.port, user, urls);
  const done = await waitResolved(
    ctx,
    'http://127.0.0.1:%/w/%',
    urls.length,
    startedMs,
    DRAIN_LIMIT_S,
    'known feeds',
  );
  log(`feeds: ${done.fetched} known feeds fetched in ${done.seconds} s`);
  return {
    bases,
    counts,
    known: {
      feeds: urls.length,
      per_client_second: KNOWN_PER_CLIENT_S,
      seconds: done.seconds,
      fetched: done.fetched,
      failed: done.failed,
      rate_per_s: round(done.fetched / done.seconds, 1),
    },
  };
}

/** A castlog run's figures with what the resolver did meanwhile: the feed server's requests in the
 * measured window (a fetch each), by set; for a busy run, the batch's feeds still waiting at its end
 * and how long the batch took to resolve in all. */
type CastlogRun = RoundFigures & {
  readonly resolver: ReturnType<typeof statsBetween> & {
    readonly fetches_per_s: number;
    readonly calls: ReturnType<typeof timesBetween>;
  };
  readonly usage: ReturnType<ReturnType<typeof usageMeter>>;
  readonly write_feeds_not_known: number;
  readonly batch?: { feeds: number; left_at_end: number; seconds: number; complete: boolean };
};

/** Runs of the write rounds: the baseline's, castlog's idle and busy. */
function writeRuns(
  ctx: Context,
  users: readonly BenchUser[],
  known: { bases: Record<string, string[]>; counts: Record<string, number> },
  batch: number,
) {
  const { castlog, server, options } = ctx;
  const runId = uniqueName('f');
  const bearer = users.map((user) => ({ authorization: `Bearer ${user.token}` }));
  const plain = users.map((user) => ({ 'x-user-id': user.id }));
  const roundMs = options.durationMs / options.rounds;
  const spec = (
    port: number,
    headers: Record<string, string>[],
    request: LoadSpec['request'],
    ms: number,
  ) => ({
    port,
    concurrency: options.concurrency,
    durationMs: ms,
    warmupMs: options.warmupMs,
    clientHeaders: headers,
    request,
    expectStatus: 200,
  });
  const baselineRun = (baselinePort: number, name: string, ms: number) =>
    runLoad(
      spec(
        baselinePort,
        plain,
        { kind: 'add', path: '/v1/subscriptions', items: 1, runId: `${runId}_${name}` },
        ms,
      ),
    );
  const castlogLoad = (name: string, ms: number, onMeasuring?: () => void) =>
    runLoad(
      spec(
        castlog.port,
        bearer,
        {
          kind: 'add',
          path: '/v1/subscriptions',
          items: 1,
          runId: `${runId}_${name}`,
          feedBases: known.bases[name] as string[],
        },
        ms,
      ),
      onMeasuring,
    );
  const castlogRun = async (condition: 'idle' | 'busy', n: number): Promise<CastlogRun> => {
    const name = `${condition}${n}`;
    let batchStart: { startedMs: number; feeds: number } | undefined;
    if (condition === 'busy') {
      const [user] = await castlog.addUsers(1);
      if (!user) throw new Error('no user');
      const urls = Array.from({ length: batch }, (_, i) => feedUrlOf(server.origins, `b${n}`, i));
      batchStart = { startedMs: Date.now(), feeds: urls.length };
      await subscribe(castlog.port, user, urls);
    }
    let before: Promise<FeedServerStats> = server.stats();
    let calls: ResolverTimes = ctx.timing.snapshot();
    let usage = usageMeter();
    const result = await castlogLoad(name, roundMs, () => {
      before = server.stats();
      calls = ctx.timing.snapshot();
      usage = usageMeter();
    });
    const used = usage();
    const resolverCalls = timesBetween(calls, ctx.timing.snapshot());
    const window = statsBetween(await before, await server.stats());
    const writeFeeds = await catalogCounts(ctx.stats, `http://127.0.0.1:%/w/${name}/%`);
    const fetches = Object.values(window.requests).reduce((sum, count) => sum + count, 0);
    const run = {
      ...figures(result, 1),
      resolver: { ...window, fetches_per_s: round(fetches / window.seconds, 1), calls: resolverCalls },
      usage: used,
      write_feeds_not_known: Math.max(0, writeFeeds.known - (known.counts[name] ?? 0)),
    };
    if (!batchStart) return run;
    const pattern = `http://127.0.0.1:%/b${n}/%`;
    const left = await catalogCounts(ctx.stats, pattern);
    const drained = await waitResolved(
      ctx,
      pattern,
      batchStart.feeds,
      batchStart.startedMs,
      DRAIN_LIMIT_S,
      `round ${n}'s batch`,
    );
    return {
      ...run,
      batch: {
        feeds: batchStart.feeds,
        left_at_end: batchStart.feeds - left.fetched - left.failed,
        seconds: drained.seconds,
        complete: drained.complete,
      },
    };
  };
  return { baselineRun, castlogLoad, castlogRun };
}

/** Alternating rounds of the write scenario's single POSTs: the baseline, castlog with the resolver
 * idle, castlog while it resolves a fresh batch of distinct feeds (`conditionOrder`). */
async function writeBusyIdle(ctx: Context, resolved: Resolved, databaseUrl: string, poolSize: number) {
  const { castlog, options, log } = ctx;
  const roundMs = options.durationMs / options.rounds;
  const runSeconds = (options.warmupMs + roundMs) / 1000;
  const names = [
    { name: 'warmup', seconds: (options.warmupMs + options.warmupPassMs) / 1000 },
    ...Array.from({ length: options.rounds }, (_, i) => [
      { name: `idle${i + 1}`, seconds: runSeconds },
      { name: `busy${i + 1}`, seconds: runSeconds },
    ]).flat(),
  ];
  const prepared = await prepareKnownFeeds(ctx, names);
  const batch = batchSize(resolved.steady_rate_per_s, runSeconds + 2);
  const users = await castlog.addUsers(options.concurrency);
  const baseline = await startBaseline(databaseUrl, poolSize);
  try {
    const runs = writeRuns(ctx, users, prepared, batch);
    log(`feeds: warming the baseline up for ${options.warmupPassMs / 1000} s`);
    await runs.baselineRun(baseline.port, 'warmup', options.warmupPassMs);
    log(`feeds: warming castlog and the broker up for ${options.warmupPassMs / 1000} s`);
    await runs.castlogLoad('warmup', options.warmupPassMs);
    // Feeds past the known ones, had the warm-up run faster than KNOWN_PER_CLIENT_S, are fetched now.
    const warm = await waitResolved(
      ctx,
      'http://127.0.0.1:%/w/warmup/%',
      prepared.counts.warmup ?? 0,
      Date.now(),
      DRAIN_LIMIT_S,
      'the warm-up',
    );
    const warmupNotKnown = warm.fetched + warm.failed - (prepared.counts.warmup ?? 0);
    if (warmupNotKnown > 0) log(`feeds: the warm-up added ${warmupNotKnown} feeds not known beforehand`);
    const rounds = await alternateConditions(options.rounds, async (condition: Condition, n) => {
      log(
        `feeds: round ${n}: ${condition === 'baseline' ? 'baseline' : `castlog, resolver ${condition}${condition === 'busy' ? ` (a batch of ${batch} feeds)` : ''}`}, ` +
          `${options.concurrency} clients for ${roundMs / 1000} s`,
      );
      if (condition === 'baseline') return figures(await runs.baselineRun(baseline.port, `${n}`, roundMs), 1);
      return runs.castlogRun(condition, n);
    });
    return { known: { ...prepared.known, warmup_not_known: warmupNotKnown }, batch, rounds, roundMs };
  } finally {
    await baseline.close().catch((error: unknown) => log(`feeds: closing the baseline: ${String(error)}`));
  }
}

type WriteRounds = Awaited<ReturnType<typeof writeBusyIdle>>;

/** The write rounds' figures: each condition's over the rounds, the ratios and the verdict. */
function writeFigures(write: WriteRounds) {
  const rounds = write.rounds as ConditionRound<RoundFigures & Partial<CastlogRun>>[];
  const withRatios = rounds.map((r) => ({
    ...r,
    idle_ratio: ratio(r.idle.requests_per_s, r.baseline.requests_per_s),
    busy_ratio: ratio(r.busy.requests_per_s, r.baseline.requests_per_s),
    busy_over_idle: ratio(r.busy.requests_per_s, r.idle.requests_per_s),
  }));
  const verdict: BusyIdleVerdict = busyIdleVerdict(
    withRatios.map((r) => ({ idle: r.idle_ratio, busy: r.busy_ratio })),
  );
  return {
    baseline: overRounds(rounds.map((r) => r.baseline)),
    idle: overRounds(rounds.map((r) => r.idle)),
    busy: overRounds(rounds.map((r) => r.busy)),
    ratio_idle: verdict.idle,
    ratio_busy: verdict.busy,
    drop: verdict.drop,
    noise: verdict.noise,
    met: verdict.met,
    paired_drop: verdict.paired_drop,
    busy_over_idle: spreadOf(withRatios.map((r) => r.busy_over_idle)),
    p99_idle_ratio: spreadOf(rounds.map((r) => ratio(r.idle.p99_ms, r.baseline.p99_ms))),
    p99_busy_ratio: spreadOf(rounds.map((r) => ratio(r.busy.p99_ms, r.baseline.p99_ms))),
    main_thread_utilization_idle: spreadOf(
      rounds.map((r) => r.idle.usage?.main_thread_utilization ?? Number.NaN),
    ),
    main_thread_utilization_busy: spreadOf(
      rounds.map((r) => r.busy.usage?.main_thread_utilization ?? Number.NaN),
    ),
    machine_cpu_busy_idle: spreadOf(rounds.map((r) => r.idle.usage?.machine_cpu_busy ?? Number.NaN)),
    machine_cpu_busy_busy: spreadOf(rounds.map((r) => r.busy.usage?.machine_cpu_busy ?? Number.NaN)),
    busy_fetch_wall_ms: spreadOf(rounds.map((r) => r.busy.resolver?.calls.fetch.mean_ms ?? Number.NaN)),
    busy_record_wall_ms: spreadOf(rounds.map((r) => r.busy.resolver?.calls.record.mean_ms ?? Number.NaN)),
    busy_mean_fetches_in_flight: spreadOf(
      rounds.map((r) => r.busy.resolver?.calls.mean_fetches_in_flight ?? Number.NaN),
    ),
    resolver_fetches_per_s_busy: spreadOf(rounds.map((r) => r.busy.resolver?.fetches_per_s ?? Number.NaN)),
    resolver_fetches_idle: rounds.reduce(
      (sum, r) => sum + Object.values(r.idle.resolver?.requests ?? {}).reduce((a, b) => a + b, 0),
      0,
    ),
    batch_left_at_end: spreadOf(
      rounds.map((r) => r.busy.batch?.left_at_end ?? Number.NaN),
      0,
    ),
    write_feeds_not_known: rounds.reduce(
      (sum, r) => sum + (r.idle.write_feeds_not_known ?? 0) + (r.busy.write_feeds_not_known ?? 0),
      0,
    ),
    rounds: withRatios,
  };
}

type WriteFigures = ReturnType<typeof writeFigures>;

/** 10,000 (by default) distinct feeds served by a local HTTP server, resolved by castlog's feed
 * resolver alone and timed; then the write scenario's single POSTs against its baseline in rounds
 * where the resolver is idle and where it resolves a fresh batch of feeds. One castlog throughout. */
export async function feedsScenario(infra: BenchInfra, options: FeedsOptions): Promise<ScenarioOutcome> {
  const { log } = options;
  const hosts = hostsFor(options.feeds);
  const database = await createDatabase(infra.databaseUrl, uniqueName('castlog_bench_feeds'));
  const config = benchConfig(database.url, infra.kafkaBrokers, {
    ...options.castlogSettings,
    FEEDS: 'on',
    FEEDS_ALLOWED_RANGES: '127.0.0.1/32',
  });
  const parseMs = parseCost();
  const server = await startFeedServer(hosts);
  const timing = timeResolver();
  const castlog = await startCastlog(config).catch(async (error: unknown) => {
    timing.restore();
    await server.close();
    throw error;
  });
  const stats = new Pool({ connectionString: database.url, max: 1 });
  const ctx: Context = { castlog, server, stats, options, timing, parseMs, log };
  try {
    const resolved = await resolveAlone(ctx);
    const write = await writeBusyIdle(ctx, resolved, database.url, config.DATABASE_POOL_SIZE);
    const summary = writeFigures(write);
    log(
      `feeds: single POST ratio idle ${formatSpread(summary.ratio_idle)}, busy ${formatSpread(summary.ratio_busy)}; ` +
        `drop ${summary.drop} against the idle rounds' spread ${summary.noise} (${summary.met ? 'within' : 'beyond'} it); ` +
        `busy / idle ${formatSpread(summary.busy_over_idle)}; resolver ${formatSpread(summary.resolver_fetches_per_s_busy)} fetches/s in busy windows, ` +
        `${summary.resolver_fetches_idle} in idle windows`,
    );
    const settings = {
      feeds: options.feeds,
      hosts,
      feeds_per_host: FEEDS_PER_HOST,
      hosts_choice:
        `one port of 127.0.0.1 stands for one publisher's host (the resolver's per-host limit keys on host:port), ` +
        `${FEEDS_PER_HOST} feeds a port, consecutive feeds on different ports; castlog's default FEED_CONCURRENCY and ` +
        'FEED_HOST_CONCURRENCY, not raised',
      feed_concurrency: config.FEED_CONCURRENCY,
      feed_host_concurrency: config.FEED_HOST_CONCURRENCY,
      feed_refresh_interval_s: config.FEED_REFRESH_INTERVAL / 1000,
      feeds_allowed_ranges: config.FEEDS_ALLOWED_RANGES,
      concurrency: options.concurrency,
      duration_s: options.durationMs / 1000,
      rounds: options.rounds,
      round_s: write.roundMs / 1000,
      warmup_s: options.warmupMs / 1000,
      warmup_pass_s: options.warmupPassMs / 1000,
      batch_feeds: write.batch,
      database_pool_size: config.DATABASE_POOL_SIZE,
    };
    return feedsOutcome(options, settings, resolved, write.known, summary, config);
  } finally {
    await stats.end().catch(() => undefined);
    await castlog.close().catch((error: unknown) => log(`feeds: closing castlog: ${String(error)}`));
    timing.restore();
    await server.close().catch(() => undefined);
    await deleteTopics(infra.kafkaBrokers, [config.KAFKA_TOPIC]).catch(() => undefined);
    await database.drop().catch((error: unknown) => log(`feeds: dropping the database: ${String(error)}`));
  }
}

const NOISE_DEFINITION =
  'Each round measures the baseline once and castlog twice (resolver idle, resolver busy), in the order ' +
  "baseline, idle, busy in odd rounds and the reverse in even ones; a round's ratios are castlog's single POSTs " +
  "a second over that round's baseline. drop = median idle ratio − median busy ratio; noise = the idle rounds' " +
  'spread, their highest ratio − their lowest. The target is met when drop ≤ noise.';

function feedsOutcome(
  options: FeedsOptions,
  settings: Record<string, unknown>,
  resolved: Resolved,
  known: Awaited<ReturnType<typeof prepareKnownFeeds>>['known'],
  write: WriteFigures,
  config: Config,
): ScenarioOutcome {
  return {
    name: 'feeds',
    result: {
      description:
        `${options.feeds.toLocaleString('en-US')} distinct RSS feeds (about 8 KB, 8 episodes, iTunes tags, distinct titles) served by a ` +
        'node:http server on 127.0.0.1 in a worker thread, subscribed through /v1 POSTs of 1,000 and resolved by ' +
        "castlog's feed resolver (FEEDS=on, FEEDS_ALLOWED_RANGES=127.0.0.1/32) with nothing else running: the time from " +
        "the first POST until every one's catalog row has outcome 'fetched'. Then the write scenario's single POSTs " +
        '(64 clients) against its baseline, in rounds where the resolver is idle and where it resolves a fresh batch ' +
        'of distinct feeds. The write load adds feeds the catalog already knows (every client the same, subscribed ' +
        'and fetched beforehand), so that it gives the resolver nothing to fetch itself.',
      noise_definition: NOISE_DEFINITION,
      settings,
      resolve: resolved,
      known_write_feeds: known,
      write,
      resolve_seconds: resolved.complete ? resolved.seconds : Math.max(resolved.seconds, RESOLVE_LIMIT_S),
      write_ratio_drop: write.drop,
      write_ratio_noise: write.noise,
    },
    rows: feedsRows(options, resolved, write),
    chart: feedsChart(options, resolved, write, config),
  };
}

function feedsRows(options: FeedsOptions, resolved: Resolved, write: WriteFigures): SummaryRow[] {
  const seconds = targetOf('feeds.resolve.seconds');
  const ratioRow = (condition: 'idle' | 'busy', measured: PhaseFigures, ratios: Spread): SummaryRow => ({
    scenario: 'feeds',
    metric: `single POST throughput, castlog with the resolver ${condition} / baseline`,
    unit: 'req/s',
    measured: measured.requests_per_s.median,
    baseline: write.baseline.requests_per_s.median,
    ratio: ratios.median,
    ratio_rounds: ratios,
  });
  return [
    {
      scenario: 'feeds',
      metric: `${options.feeds.toLocaleString('en-US')} feeds resolved from a local server, first subscription to all fetched (no baseline)`,
      unit: 's',
      measured: resolved.seconds,
      baseline: Number.NaN,
      ratio: Number.NaN,
      target: seconds.text,
      ...(options.feeds === 10_000 ? { met: resolved.complete && seconds.met(resolved.seconds) } : {}),
    },
    {
      scenario: 'feeds',
      metric: 'resolver fetches a second: alone (castlog column), during busy write rounds (baseline column)',
      unit: 'feeds/s',
      measured: resolved.fetch_rate_per_s,
      baseline: write.resolver_fetches_per_s_busy.median,
      ratio: Number.NaN,
    },
    ratioRow('idle', write.idle, write.ratio_idle),
    ratioRow('busy', write.busy, write.ratio_busy),
    {
      scenario: 'feeds',
      metric:
        "single POST ratio's drop, idle − busy medians (castlog column), against the idle rounds' spread (baseline column)",
      unit: 'ratio',
      measured: write.drop,
      baseline: write.noise,
      ratio: Number.NaN,
      ratio_rounds: write.paired_drop,
      target: "≤ the idle rounds' spread",
      met: write.met,
    },
    {
      scenario: 'feeds',
      metric: 'single POST p99, castlog with the resolver busy / baseline',
      unit: 'ms',
      measured: write.busy.p99_ms.median,
      baseline: write.baseline.p99_ms.median,
      ratio: write.p99_busy_ratio.median,
      ratio_rounds: write.p99_busy_ratio,
    },
  ];
}

function feedsChart(
  options: FeedsOptions,
  resolved: Resolved,
  write: WriteFigures,
  config: Config,
): ScenarioOutcome['chart'] {
  return {
    title: `feeds: ${options.feeds.toLocaleString('en-US')} feeds resolved from a local server; write ratio with the resolver busy vs idle`,
    subtitle:
      `${options.concurrency} write clients, ${options.rounds} rounds of ${options.durationMs / options.rounds / 1000} s per condition ` +
      `(medians); FEED_CONCURRENCY ${config.FEED_CONCURRENCY}, FEED_HOST_CONCURRENCY ${config.FEED_HOST_CONCURRENCY}, ` +
      `${hostsFor(options.feeds)} ports of ${FEEDS_PER_HOST} feeds`,
    panels: [
      {
        title: `time to resolve ${options.feeds.toLocaleString('en-US')} feeds`,
        unit: 's',
        groups: [
          {
            label: 'first POST to all fetched',
            bars: [
              { series: 'castlog', value: resolved.seconds },
              { series: 'target', value: RESOLVE_TARGET_S },
            ],
          },
        ],
      },
      {
        title: 'resolver fetch rate',
        unit: 'feeds/s',
        groups: [
          { label: 'alone', bars: [{ series: 'castlog', value: resolved.fetch_rate_per_s }] },
          {
            label: 'during write rounds',
            bars: [{ series: 'castlog', value: write.resolver_fetches_per_s_busy.median }],
          },
        ],
      },
      {
        title: 'single POST throughput ratio to the baseline',
        unit: 'ratio',
        groups: [
          { label: 'resolver idle', bars: [{ series: 'castlog', value: write.ratio_idle.median }] },
          { label: 'resolver busy', bars: [{ series: 'castlog', value: write.ratio_busy.median }] },
        ],
      },
      {
        title: 'single POST throughput',
        unit: 'requests/s',
        groups: [
          {
            label: 'resolver idle',
            bars: [
              { series: 'castlog', value: write.idle.requests_per_s.median },
              { series: 'baseline (bare Fastify + upsert)', value: write.baseline.requests_per_s.median },
            ],
          },
          {
            label: 'resolver busy',
            bars: [
              { series: 'castlog', value: write.busy.requests_per_s.median },
              { series: 'baseline (bare Fastify + upsert)', value: write.baseline.requests_per_s.median },
            ],
          },
        ],
      },
    ],
  };
}
