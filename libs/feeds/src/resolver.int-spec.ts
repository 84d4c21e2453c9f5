import { LogEvent } from '@castlog/domain';
import { envelopeOf, PostgresEventLog } from '@castlog/event-log';
import { Database } from '@castlog/read-model';
import { openDatabaseAt } from '@castlog/runtime';
import { DependencyHealth } from '@castlog/supervision';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { createTestDatabase } from '../../../test/support/databases';
import { poll } from '../../../test/support/until';
import { FeedCatalog } from './catalog/feed-catalog';
import { insertSubscription } from './testing/subscriptions';
import type { FetchResult } from './fetch/feed-fetcher';
import { FeedResolver, ResolverOptions } from './resolver';
import { ResolverProgress } from './resolver-progress';

const DAY = 86_400_000;

const added = (userId: string, urls: readonly string[]): LogEvent => ({
  type: 'SubscriptionsAddRequested',
  userId,
  items: urls.map((feedUrl) => ({ feedUrl, candidateGuid: randomUUID() })),
});

/** A stand-in for the fetcher that answers at once and counts how many fetches it holds at a time,
 * overall and per host (the HTTP side has its own specs against real servers). */
class CountingFetcher {
  readonly fetched: string[] = [];
  maxOverall = 0;
  readonly maxPerHost = new Map<string, number>();
  private overall = 0;
  private readonly perHost = new Map<string, number>();

  constructor(private readonly answer: (url: string) => FetchResult) {}

  async fetch(url: string): Promise<FetchResult> {
    const host = new URL(url).host;
    this.overall += 1;
    this.perHost.set(host, (this.perHost.get(host) ?? 0) + 1);
    this.maxOverall = Math.max(this.maxOverall, this.overall);
    this.maxPerHost.set(host, Math.max(this.maxPerHost.get(host) ?? 0, this.perHost.get(host) ?? 0));
    await new Promise((resolve) => setImmediate(resolve));
    this.overall -= 1;
    this.perHost.set(host, (this.perHost.get(host) ?? 1) - 1);
    this.fetched.push(url);
    return this.answer(url);
  }
}

/** The resolver against a real database and table log: what it learns from the log, how it fetches
 * and what it records. */
describe('FeedResolver', () => {
  let database: Database;
  let pool: Pool;
  let eventLog: PostgresEventLog;
  let catalog: FeedCatalog;
  const options: ResolverOptions = {
    group: 'feed-resolver-test',
    refreshIntervalMs: DAY,
    fetchTimeoutMs: 5_000,
    concurrency: 4,
    hostConcurrency: 2,
    fetchRate: 1000,
  };
  const rows = async (): Promise<
    { url: string; title: string | null; outcome: string | null; failures: number }[]
  > =>
    database.dataSource.query(`SELECT url, title, outcome, failures FROM castlog_feeds.feeds ORDER BY url`);
  const resolverWith = (fetcher: CountingFetcher, lines: string[] = [], fetchRate = options.fetchRate) =>
    new FeedResolver(
      { ...options, fetchRate },
      {
        catalog,
        eventLog,
        fetcher,
        parse: (body) => ({ title: new TextDecoder().decode(body), episodeCount: 1 }),
        health: new DependencyHealth(),
        progress: new ResolverProgress(),
        log: (level, message) => lines.push(`${level}: ${message}`),
      },
    );

  beforeAll(async () => {
    const url = await createTestDatabase('feed_resolver');
    database = await openDatabaseAt(url, 'castlog', 4);
    pool = new Pool({ connectionString: url, max: 4 });
    eventLog = new PostgresEventLog(pool);
    catalog = new FeedCatalog(database.dataSource, { schema: 'castlog' });
  });
  afterAll(async () => {
    await eventLog.close();
    await pool.end();
    await database.close();
  });

  it('learns the feeds of the log, fetches each once within its limits, and records what it read', async () => {
    const urls = [
      ...Array.from({ length: 10 }, (_, i) => `https://busy.example/feed/${i}`),
      ...Array.from({ length: 10 }, (_, i) => `https://feed${i}.example/rss`),
    ];
    await eventLog.append([
      envelopeOf(added('user-a', urls.slice(0, 12)), 'r1'),
      envelopeOf(added('user-b', urls.slice(8)), 'r2'),
    ]);
    const body = (url: string) => new TextEncoder().encode(`Title of ${url}`);
    const fetcher = new CountingFetcher((url) => ({
      kind: 'fetched',
      body: body(url),
      etag: `"${url.length}"`,
    }));
    const resolver = resolverWith(fetcher);
    await resolver.start();
    try {
      await poll('every feed fetched and recorded', async () =>
        (await rows()).filter((row) => row.outcome === 'fetched').length === urls.length ? true : undefined,
      );
    } finally {
      await resolver.stop();
    }
    expect(await rows()).toEqual(
      [...urls].sort().map((url) => ({ url, title: `Title of ${url}`, outcome: 'fetched', failures: 0 })),
    );
    expect([...fetcher.fetched].sort()).toEqual([...urls].sort());
    expect(fetcher.maxOverall).toBeLessThanOrEqual(options.concurrency);
    expect(Math.max(...fetcher.maxPerHost.values())).toBeLessThanOrEqual(options.hostConcurrency);
    expect(await catalog.learnedUpTo(0)).toBe(2);
  });

  it('records a failure with its outcome in one log line, and resumes the log where it stopped', async () => {
    await eventLog.append([envelopeOf(added('user-c', ['https://down.example/rss?token=s3cret']), 'r3')]);
    const fetcher = new CountingFetcher(() => ({
      kind: 'failed',
      outcome: 'http-error',
      detail: 'HTTP 503 Service Unavailable',
      retryAfterMs: 2 * 3_600_000,
    }));
    const lines: string[] = [];
    const resolver = resolverWith(fetcher, lines);
    await resolver.start();
    try {
      await poll('the failure recorded', async () =>
        (await rows()).some((row) => row.outcome === 'http-error') ? true : undefined,
      );
    } finally {
      await resolver.stop();
    }
    // Only the new feed was due: the others were learned and fetched before.
    expect(fetcher.fetched).toEqual(['https://down.example/rss?token=s3cret']);
    const [row] = await database.dataSource.query(
      `SELECT failures, outcome_detail, next_fetch_at - fetched_at AS wait FROM castlog_feeds.feeds WHERE url LIKE 'https://down%'`,
    );
    expect(row).toMatchObject({ failures: 1, outcome_detail: 'HTTP 503 Service Unavailable' });
    expect(row.wait).toMatchObject({ hours: 2 });
    expect(lines).toEqual([
      'warn: feed https://down.example/rss?…: http-error (HTTP 503 Service Unavailable); 1 failure in a row, next attempt in 7200 s',
    ]);
  });

  it('appends a move for each user still on a moved feed, and none for two feeds that name each other', async () => {
    const [moving, home, ping, pong] = ['moving', 'home', 'ping', 'pong'].map(
      (name) => `https://${name}.example/rss`,
    );
    const user = `user-${randomUUID()}`;
    const id = await insertSubscription(database.dataSource, user, moving);
    await insertSubscription(database.dataSource, user, ping);
    // pong said before that it moved to ping.
    await catalog.learn([pong], Date.now(), 9, 1);
    await catalog.record(
      pong,
      { outcome: 'not-modified', validators: {}, movedTo: ping },
      Date.now(),
      Date.now() + DAY,
    );
    const from = await eventLog.endOffsets();
    await eventLog.append([envelopeOf(added(user, [moving, ping]), 'r4')]);
    const fetcher = new CountingFetcher((url) =>
      url === moving
        ? { kind: 'fetched', body: new Uint8Array(), movedTo: home }
        : { kind: 'not-modified', movedTo: pong },
    );
    const lines: string[] = [];
    const resolver = resolverWith(fetcher, lines);
    await resolver.start();
    try {
      await poll('both fetched', async () => (fetcher.fetched.length >= 2 ? true : undefined));
      await poll('the move logged', async () =>
        lines.some((line) => line.includes('moved to')) ? true : undefined,
      );
    } finally {
      await resolver.stop();
    }
    const appended: LogEvent[] = [];
    await eventLog.readToEnd(async (batch) => {
      appended.push(
        ...batch.records.map((record) => record.value).filter((event) => event.type === 'FeedMoved'),
      );
    }, from);
    expect(appended).toEqual([
      {
        type: 'FeedMoved',
        userId: user,
        feedUrl: moving,
        newFeedUrl: home,
        cause: 'permanent-redirect',
        guids: [id],
      },
    ]);
    expect(lines).toContain(
      'warn: feed https://ping.example/rss and https://pong.example/rss each say the other is their new home; neither move is made',
    );
  });

  it('fetches every due feed at a low FEED_FETCH_RATE too, one start after another', async () => {
    const urls = Array.from({ length: 8 }, (_, i) => `https://paced${i}.example/rss`);
    await eventLog.append([envelopeOf(added(`user-${randomUUID()}`, urls), 'r5')]);
    const fetcher = new CountingFetcher((url) => ({ kind: 'fetched', body: new TextEncoder().encode(url) }));
    const resolver = resolverWith(fetcher, [], 20);
    await resolver.start();
    try {
      await poll('every paced feed fetched', async () =>
        fetcher.fetched.length === urls.length ? true : undefined,
      );
    } finally {
      await resolver.stop();
    }
    // The spacing itself is the Pacer's (pacer.spec.ts, on a clock of its own): here, one at a time.
    expect(fetcher.maxOverall).toBe(1);
  });
});
