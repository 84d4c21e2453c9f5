import { FeedMoveCause, FeedMoved, keysOf, normalizeFeedUrl } from '@castlog/domain';
import { envelopeOf, EventLog, LogBatch, RunningConsumer } from '@castlog/event-log';
import { randomUUID } from 'node:crypto';
import { DependencyHealth, LogFn, messageOf, Pacer, pause, retry, Wakeup } from '@castlog/supervision';
import pLimit from 'p-limit';
import { DueFeed, FeedCatalog, FetchRecord } from './catalog/feed-catalog';
import type { FeedFetcher, FetchResult } from './fetch/feed-fetcher';
import type { FeedInfo } from './parse/feed-parser';
import { ResolverProgress } from './resolver-progress';

export interface ResolverOptions {
  /** The consumer group (Kafka) or reader (table log) the resolver follows the log as. */
  readonly group: string;
  /** How long after a fetch the feed is fetched again; the longest a failing feed waits. */
  readonly refreshIntervalMs: number;
  /** The longest one fetch takes (the fetcher's timeout): claims are leased for long enough. */
  readonly fetchTimeoutMs: number;
  /** Fetches in flight at once, and at once to one host. */
  readonly concurrency: number;
  readonly hostConcurrency: number;
  /** Fetches started a second, at most: the resolver is background work, and in the embedded
   * process it shares the API's thread, whose answers its bursts would slow. */
  readonly fetchRate: number;
}

export interface ResolverDependencies {
  readonly catalog: FeedCatalog;
  readonly eventLog: EventLog;
  readonly fetcher: Pick<FeedFetcher, 'fetch'>;
  readonly parse: (body: Uint8Array, contentType?: string) => FeedInfo;
  readonly health: DependencyHealth;
  readonly progress: ResolverProgress;
  readonly log: LogFn;
  /** Each fetch's outcome, once recorded (metrics). */
  readonly fetched?: (outcome: string) => void;
  readonly now?: () => number;
}

/** The first wait after a failed fetch; it doubles with each failure in a row, up to the refresh
 * interval. */
export const FIRST_RETRY_MS = 60_000;
/** The longest `Retry-After` honoured: a server asking for more is asked again after this. */
const MAX_RETRY_AFTER_MS = 7 * 86_400_000;
/** How often the resolver measures the catalog's backlog (metrics, readiness, the progress line). */
const REPORT_EVERY_MS = 15_000;
/** A backlog at least this large is reported in the log as it shrinks. */
const LARGE_BACKLOG = 100;
/** A feed learned this recently stays through a sweep, whoever holds it: its subscription may not be
 * projected yet. */
const SWEEP_GRACE_MS = 3_600_000;
const SWEEP_EVERY_MS = 3_600_000;
/** Records written at once: with one claim, one batch learned and one measure of the backlog, the
 * resolver holds at most five of the process's pooled connections, whatever FEED_CONCURRENCY is
 * (the embedded process shares one pool between the API, the projector and the resolver). */
const CONCURRENT_RECORDS = 2;
/** The most envelopes one append of feed moves carries. */
const MOVES_PER_APPEND = 500;
/** The most subscriptions one FeedMoved names (the log's schema bounds it). */
const GUIDS_PER_MOVE = 1000;
/** Health components: the catalog's database, and the resolver's place in the log. */
const CATALOG = 'feed catalog';
const LOG = 'feed resolver';

/** When a feed that failed `failures` times in a row is fetched next, `nowMs` being now: a backoff
 * that doubles from FIRST_RETRY_MS up to the refresh interval, or later when the server asked so. */
export function nextAttemptAfterFailure(
  nowMs: number,
  failures: number,
  refreshIntervalMs: number,
  retryAfterMs?: number,
): number {
  const backoff = Math.min(refreshIntervalMs, FIRST_RETRY_MS * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  return nowMs + Math.max(backoff, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
}

/** Where a fetch of the feed `url` (normalised) says it moved for good, and why: the target of the
 * permanent redirects it followed, else the feed's `<itunes:new-feed-url>`. A feed that names itself
 * (many do, in some spelling) has not moved. */
export interface FeedMove {
  readonly to: string;
  readonly cause: FeedMoveCause;
}

/** What a fetcher's answer (and the parser's reading of its body) records in the catalog for the
 * feed `url` (normalised), and where the feed moved. */
export function recordOf(
  url: string,
  result: FetchResult,
  parse: ResolverDependencies['parse'],
): FetchRecord & { retryAfterMs?: number; move?: FeedMove } {
  if (result.kind === 'failed')
    return { outcome: result.outcome, detail: result.detail, retryAfterMs: result.retryAfterMs };
  const validators = { etag: result.etag, lastModified: result.lastModified };
  const moveTo = (to: string | undefined, cause: FeedMoveCause) =>
    to === undefined || normalizeFeedUrl(to) === url ? {} : { movedTo: to, move: { to, cause } };
  const redirected = moveTo(result.movedTo, 'permanent-redirect');
  if (result.kind === 'not-modified') return { outcome: 'not-modified', validators, ...redirected };
  let info: FeedInfo;
  try {
    info = parse(result.body, result.contentType);
  } catch (error) {
    return { outcome: 'malformed', detail: messageOf(error) };
  }
  const moved = result.movedTo !== undefined ? redirected : moveTo(info.newFeedUrl, 'new-feed-url');
  return { outcome: 'fetched', metadata: info, validators, ...moved };
}

const chunksOf = <T>(values: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(values.length / size) }, (_, i) => values.slice(i * size, (i + 1) * size));

/** A feed URL as the log shows it: without its query, which may hold a private feed's token. */
export const shownUrl = (url: string): string => {
  const query = url.indexOf('?');
  return query < 0 ? url : `${url.slice(0, query)}?…`;
};

/** The feed resolver: learns every feed the log's events reach (under its own consumer group) into
 * the catalog as due, fetches due feeds with bounded concurrency overall and per host, records what
 * each fetch tells and when to fetch again, and sweeps the feeds nobody holds any more. It
 * recovers by itself when PostgreSQL or the log drops (every wait on them is `retry`'s). */
export class FeedResolver {
  private readonly abort = new AbortController();
  private readonly wakeup = new Wakeup();
  private readonly overall: pLimit.Limit;
  private readonly records = pLimit(CONCURRENT_RECORDS);
  private readonly hosts = new Map<string, pLimit.Limit>();
  private readonly now: () => number;
  private consumer?: RunningConsumer;
  private loops: Promise<void>[] = [];
  private fetchedSinceReport = 0;
  /** Fetch starts, `1000 / fetchRate` ms apart. */
  private readonly pacer: Pacer;

  constructor(
    private readonly options: ResolverOptions,
    private readonly deps: ResolverDependencies,
  ) {
    this.overall = pLimit(options.concurrency);
    this.pacer = new Pacer(options.fetchRate);
    this.now = deps.now ?? Date.now;
  }

  async start(): Promise<void> {
    const { eventLog, catalog } = this.deps;
    this.deps.progress.started(this.now());
    this.consumer = await eventLog.consume({
      group: this.options.group,
      startFrom: (partition) => catalog.learnedUpTo(partition),
      handle: (batch) => this.learn(batch),
      onError: (error) => this.lost(LOG, error),
      onRecovered: () => this.restored(LOG),
    });
    const signal = this.abort.signal;
    this.loops = [this.fetchLoop(signal), this.reportLoop(signal)];
  }

  /** Stops learning and claiming; fetches in flight are left to their leases, which the next claim
   * after they end takes up again, so stopping never waits for a slow server. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.consumer?.stop();
    await Promise.all(this.loops);
    this.deps.progress.stopped();
  }

  private async learn(batch: LogBatch): Promise<void> {
    const last = batch.records[batch.records.length - 1];
    if (!last) return;
    const urls = keysOf(batch.records.map((record) => record.value)).feedUrls.map(([, url]) => url);
    const added = await this.deps.catalog.learn(urls, this.now(), batch.partition, last.offset + 1);
    if (added > 0) this.wakeup.ring();
  }

  /** Claims due feeds while fetches have room (twice the concurrency, so that per-host queues stay
   * fed; claimed once half of it is free, so one claim serves many fetches), and waits for a fetch
   * to end, a feed to be learned, or the next poll. */
  private async fetchLoop(signal: AbortSignal): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    const pollMs = Math.min(30_000, this.options.refreshIntervalMs);
    while (!signal.aborted) {
      const room = this.options.concurrency * 2 - inFlight.size;
      const claimed = room >= this.options.concurrency ? await this.claim(room, signal) : [];
      if (room >= this.options.concurrency && claimed.length === 0) this.deps.progress.progressed(this.now());
      for (const feed of claimed) {
        const running: Promise<void> = this.schedule(feed, signal).finally(() => {
          inFlight.delete(running);
          this.wakeup.ring();
        });
        inFlight.add(running);
      }
      if (room < this.options.concurrency || claimed.length < room) await this.wakeup.wait(pollMs, signal);
    }
  }

  private async claim(limit: number, signal: AbortSignal): Promise<DueFeed[]> {
    // A claim is leased for as long as the feeds claimed with it may wait and fetch.
    const { fetchTimeoutMs, concurrency, fetchRate } = this.options;
    const leaseMs = fetchTimeoutMs * (concurrency + 2) + ((2 * concurrency) / fetchRate) * 1000;
    const claimed = await retry(() => this.deps.catalog.claimDue(this.now(), limit, leaseMs), {
      signal,
      maxMs: 30_000,
      onFailure: (error) => this.lost(CATALOG, error),
    });
    if (claimed) this.restored(CATALOG);
    return claimed ?? [];
  }

  /** Fetches `feed` when its host and then the overall limit have room. */
  private schedule(feed: DueFeed, signal: AbortSignal): Promise<void> {
    const host = URL.canParse(feed.url) ? new URL(feed.url).host : '';
    let perHost = this.hosts.get(host);
    if (!perHost) {
      perHost = pLimit(this.options.hostConcurrency);
      this.hosts.set(host, perHost);
    }
    const limit = perHost;
    const paced = async () => {
      await this.pacer.next(signal);
      if (!signal.aborted) await this.resolve(feed, signal);
    };
    return limit(() => this.overall(paced)).finally(() => {
      if (limit.activeCount === 0 && limit.pendingCount === 0) this.hosts.delete(host);
    });
  }

  private async resolve(feed: DueFeed, signal: AbortSignal): Promise<void> {
    const validators = { etag: feed.etag, lastModified: feed.lastModified };
    const result: FetchResult = await this.deps.fetcher
      .fetch(feed.url, validators)
      .catch(
        (error: unknown) => ({ kind: 'failed', outcome: 'network-error', detail: messageOf(error) }) as const,
      );
    const record = recordOf(feed.url, result, this.deps.parse);
    const nowMs = this.now();
    const failed = 'detail' in record;
    const next = failed
      ? nextAttemptAfterFailure(nowMs, feed.failures + 1, this.options.refreshIntervalMs, record.retryAfterMs)
      : nowMs + this.options.refreshIntervalMs;
    const failures = await retry(
      () => this.records(() => this.deps.catalog.record(feed.url, record, nowMs, next)),
      {
        signal,
        maxMs: 30_000,
        onFailure: (error) => this.lost(CATALOG, error),
      },
    );
    if (failures === undefined) return;
    this.restored(CATALOG);
    this.fetchedSinceReport += 1;
    this.deps.progress.progressed(this.now());
    this.deps.fetched?.(record.outcome);
    if (record.move !== undefined) await this.move(feed.url, record.move, signal);
    if (failed)
      this.deps.log(
        'warn',
        `feed ${shownUrl(feed.url)}: ${record.outcome} (${record.detail}); ` +
          `${failures} ${failures === 1 ? 'failure' : 'failures'} in a row, next attempt in ${Math.round((next - nowMs) / 1000)} s`,
      );
  }

  /** Moves the subscriptions still on the feed `url` to where it moved: one FeedMoved per user, for
   * the decider to apply as a PATCH of new_feed_url. A move is repeated at each fetch that finds
   * it, which moves only subscriptions that came to the old URL since (the decider skips the rest). */
  private async move(url: string, move: FeedMove, signal: AbortSignal): Promise<void> {
    const options = { signal, maxMs: 30_000 };
    const found = await retry(
      async () => {
        // A feed that names as its new home a feed that moved back to it would move its subscribers
        // to and fro at every refresh: neither move is made.
        const back = await this.deps.catalog.movedTo(normalizeFeedUrl(move.to));
        return back !== undefined && normalizeFeedUrl(back) === url
          ? 'loop'
          : this.deps.catalog.subscriptionsOn(url);
      },
      { ...options, onFailure: (error) => this.lost(CATALOG, error) },
    );
    if (found === undefined) return;
    if (found === 'loop') {
      this.deps.log(
        'warn',
        `feed ${shownUrl(url)} and ${shownUrl(move.to)} each say the other is their new home; neither move is made`,
      );
      return;
    }
    const envelopes = [...found].flatMap(([userId, guids]) =>
      chunksOf(guids, GUIDS_PER_MOVE).map((chunk) => {
        const event: FeedMoved = {
          type: 'FeedMoved',
          userId,
          feedUrl: url,
          newFeedUrl: move.to,
          cause: move.cause,
          guids: chunk,
        };
        return envelopeOf(event, `feed-moved-${randomUUID()}`);
      }),
    );
    for (const batch of chunksOf(envelopes, MOVES_PER_APPEND)) {
      const appended = await retry(() => this.deps.eventLog.append(batch), {
        ...options,
        onFailure: (error) => this.lost(LOG, error),
      });
      if (appended === undefined) return;
      this.restored(LOG);
    }
    if (found.size > 0)
      this.deps.log(
        'info',
        `feed ${shownUrl(url)} moved to ${shownUrl(move.to)} (${move.cause}): a move appended for ${found.size} ${found.size === 1 ? 'user' : 'users'}`,
      );
  }

  /** Measures the backlog every REPORT_EVERY_MS (a line in the log while it is large) and sweeps the
   * catalog every SWEEP_EVERY_MS. */
  private async reportLoop(signal: AbortSignal): Promise<void> {
    let lastSweepMs = this.now();
    while (!signal.aborted) {
      await pause(REPORT_EVERY_MS, signal);
      if (signal.aborted) return;
      try {
        await this.report();
        if (this.now() - lastSweepMs >= SWEEP_EVERY_MS) {
          lastSweepMs = this.now();
          const swept = await this.deps.catalog.sweep(lastSweepMs - SWEEP_GRACE_MS);
          if (swept > 0)
            this.deps.log('info', `feed catalog: ${swept} feeds nobody subscribes to any more removed`);
        }
      } catch (error) {
        // The fetch loop reports the catalog's outages; the next round measures again.
        this.deps.log('warn', `feed catalog: backlog not measured (${messageOf(error)})`);
      }
    }
  }

  private async report(): Promise<void> {
    const nowMs = this.now();
    const backlog = await this.deps.catalog.backlog(nowMs);
    this.deps.progress.measured(backlog);
    const fetched = this.fetchedSinceReport;
    this.fetchedSinceReport = 0;
    if (backlog.due >= LARGE_BACKLOG)
      this.deps.log(
        'info',
        `feed resolver: ${backlog.due} of ${backlog.known} feeds due, the oldest for ` +
          `${Math.round((nowMs - (backlog.oldestDueMs ?? nowMs)) / 1000)} s; ${fetched} fetched in the last ${REPORT_EVERY_MS / 1000} s`,
      );
  }

  private lost(component: string, error: unknown): void {
    if (!this.deps.health.isDown(component))
      this.deps.log('warn', `${component}: ${messageOf(error)}; retrying with backoff`);
    this.deps.health.lost(component, error);
  }

  private restored(component: string): void {
    if (!this.deps.health.isDown(component)) return;
    this.deps.health.restored(component);
    this.deps.log('info', `${component}: reached again`);
  }
}
