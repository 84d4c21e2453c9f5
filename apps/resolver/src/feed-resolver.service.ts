import { CONFIG, Config } from '@castlog/config';
import { EventLog } from '@castlog/event-log';
import { FeedCatalog, FeedFetcher, FeedResolver, parseFeed, ResolverProgress } from '@castlog/feeds';
import { repoRoot } from '@castlog/infra';
import { EVENT_LOG, Metrics } from '@castlog/runtime';
import { DependencyHealth } from '@castlog/supervision';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** castlog's name, version and where to learn about it, as servers see it in their logs:
 * `castlog/<version> (+<PUBLIC_URL, else the package's homepage>)`. */
export function userAgentOf(config: Config): string {
  let manifest: { version?: string; homepage?: string } = {};
  try {
    manifest = JSON.parse(readFileSync(join(repoRoot(__dirname), 'package.json'), 'utf8')) as typeof manifest;
  } catch {
    // Without its package.json castlog still names itself.
  }
  const about = config.PUBLIC_URL ?? manifest.homepage;
  return `castlog/${manifest.version ?? 'unknown'}${about ? ` (+${about})` : ''}`;
}

/** Runs the feed resolver in this process while FEEDS is on. */
@Injectable()
export class FeedResolverService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('FeedResolver');
  private resolver?: FeedResolver;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
    private readonly catalog: FeedCatalog,
    private readonly progress: ResolverProgress,
    private readonly metrics: Metrics,
    private readonly health: DependencyHealth,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    if (!config.FEEDS) {
      this.logger.log('FEEDS is off: no feed is fetched');
      return;
    }
    const userAgent = userAgentOf(config);
    const fetcher = new FeedFetcher({
      userAgent,
      timeoutMs: config.FEED_FETCH_TIMEOUT,
      maxBytes: config.FEED_MAX_BYTES,
      maxRedirects: config.FEED_MAX_REDIRECTS,
      allowPrivate: config.FEEDS_ALLOW_PRIVATE,
      allowedRanges: config.FEEDS_ALLOWED_RANGES,
    });
    this.resolver = new FeedResolver(
      {
        group: config.FEEDS_GROUP,
        refreshIntervalMs: config.FEED_REFRESH_INTERVAL,
        fetchTimeoutMs: config.FEED_FETCH_TIMEOUT,
        concurrency: config.FEED_CONCURRENCY,
        hostConcurrency: config.FEED_HOST_CONCURRENCY,
        fetchRate: config.FEED_FETCH_RATE,
      },
      {
        catalog: this.catalog,
        eventLog: this.eventLog,
        fetcher,
        parse: parseFeed,
        health: this.health,
        progress: this.progress,
        log: (level, message) =>
          level === 'error'
            ? this.logger.error(message)
            : level === 'warn'
              ? this.logger.warn(message)
              : this.logger.log(message),
        fetched: (outcome) => this.metrics.feedFetches.inc({ outcome }),
      },
    );
    await this.resolver.start();
    this.logger.log(
      `fetching subscribed feeds every ${Math.round(config.FEED_REFRESH_INTERVAL / 1000)} s as "${userAgent}"`,
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.resolver?.stop();
    this.resolver = undefined;
  }
}
