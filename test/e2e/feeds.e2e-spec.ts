import { parseOpml } from '@castlog/opml';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startTestServer, TestServer } from '../../libs/feeds/src/testing/test-server';
import { terminateBackends } from '../support/databases';
import { poll } from '../support/until';
import { CastlogUnderTest, EventLogKind, startCastlog, TestUser } from '../support/start-castlog';

/** A feed as a publisher writes it: iTunes namespace, CDATA, an entity in the title. */
const RSS = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
  <channel>
    <title>Tea &amp; Servers</title>
    <link>https://tea.example/</link>
    <description><![CDATA[A show about <b>tea</b> and servers.]]></description>
    <language>en-gb</language>
    <itunes:author>Ada</itunes:author>
    <item><title>One</title><pubDate>Tue, 14 Nov 2023 22:13:20 GMT</pubDate>
      <enclosure url="https://tea.example/1.mp3" type="audio/mpeg" length="1"/></item>
  </channel>
</rss>`;
const ETAG = '"tea-1"';

/** Serves RSS at every path, answering 304 to a request that sends its ETag back. */
const serveFeed = (request: IncomingMessage, response: ServerResponse) => {
  if (request.headers['if-none-match'] === ETAG) {
    response.writeHead(304, { etag: ETAG }).end();
    return;
  }
  response.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8', etag: ETAG }).end(RSS);
};

/** The names the simple API's OPML export gives the user's feeds, by URL. */
async function exportedNames(
  app: CastlogUnderTest,
  user: TestUser,
): Promise<Map<string, string | undefined>> {
  const response = await fetch(new URL(`/subscriptions/${user.name}.opml`, app.url), {
    headers: { authorization: `Bearer ${user.token}` },
  });
  expect(response.status).toBe(200);
  return new Map(parseOpml(await response.text()).feeds.map((feed) => [feed.url, feed.title]));
}

describe('feeds known by name', () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer(serveFeed)));
  afterAll(() => server?.close());

  describe.each<EventLogKind>(['postgres', 'kafka'])('with the resolver on, on the %s log', (log) => {
    let app: CastlogUnderTest;
    beforeAll(
      async () =>
        (app = await startCastlog({
          log,
          env: { FEEDS: 'on', FEEDS_ALLOWED_RANGES: '127.0.0.1/32', FEED_REFRESH_INTERVAL: '1s' },
        })),
    );
    afterAll(() => app?.close());

    it('names a subscribed feed by its title in the OPML export, and fetches it again conditionally', async () => {
      const alice = await app.freshUser();
      const bob = await app.freshUser();
      const path = `/tea-${log}.xml`;
      const url = server.url(path);
      const unnamed = 'https://unknown.invalid/feed.xml';
      const added = await app.as(alice).post('/v1/subscriptions', {
        subscriptions: [{ feed_url: url }, { feed_url: unnamed }],
      });
      expect(added.status).toBe(200);
      await app.until('the export to name the feed by its title', async () =>
        (await exportedNames(app, alice)).get(url) === 'Tea & Servers' ? true : undefined,
      );
      // A feed the catalog cannot name keeps its URL.
      expect((await exportedNames(app, alice)).get(unnamed)).toBe(unnamed);
      // The next fetch sends the validators back and the server answers 304.
      await poll('a conditional fetch', () =>
        server.requests.some((request) => request.path === path && request.headers['if-none-match'] === ETAG)
          ? true
          : undefined,
      );
      const first = server.requests.find((request) => request.path === path);
      expect(first?.headers['user-agent']).toMatch(/^castlog\/\d+\.\d+\.\d+/);
      // Bob holds no subscription to it: his export names nothing of Alice's.
      await app
        .as(bob)
        .post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url(`/other-${log}.xml`) }] });
      expect([...(await exportedNames(app, bob)).keys()]).toEqual([server.url(`/other-${log}.xml`)]);
      const metrics = await (await fetch(new URL('/metrics', app.url))).text();
      expect(metrics).toMatch(/castlog_feed_fetches_total\{outcome="fetched"\} [1-9]/);
    });

    it('learns and names feeds again after every PostgreSQL connection was ended, without a restart', async () => {
      const dave = await app.freshUser();
      const database = new URL(app.databaseUrl).pathname.slice(1);
      expect(await terminateBackends(process.env.DATABASE_URL as string, database)).toBeGreaterThan(0);
      const url = server.url(`/after-cut-${log}.xml`);
      // The API answers 503 while its own connections come back: the client sends again.
      await poll('the subscription to be accepted', async () =>
        (await app.as(dave).post('/v1/subscriptions', { subscriptions: [{ feed_url: url }] })).status === 200
          ? true
          : undefined,
      );
      await app.until('the export to name the feed learned after the cut', async () =>
        (await exportedNames(app, dave).catch(() => new Map())).get(url) === 'Tea & Servers'
          ? true
          : undefined,
      );
    });
  });

  describe('with FEEDS=off', () => {
    let app: CastlogUnderTest;
    beforeAll(
      async () =>
        (app = await startCastlog({
          log: 'postgres',
          env: { FEEDS: 'off', FEEDS_ALLOWED_RANGES: '127.0.0.1/32' },
        })),
    );
    afterAll(() => app?.close());

    it('learns and fetches nothing, and exports feeds by their URLs', async () => {
      const carol = await app.freshUser();
      const url = server.url('/never.xml');
      await app.as(carol).post('/v1/subscriptions', { subscriptions: [{ feed_url: url }] });
      await app.untilProjectionAtEnd();
      expect((await exportedNames(app, carol)).get(url)).toBe(url);
      const [{ known }] = await app.runtime.database.dataSource.query(
        `SELECT count(*)::int AS known FROM castlog_feeds.feeds`,
      );
      expect(known).toBe(0);
      expect(server.requests.filter((request) => request.path === '/never.xml')).toEqual([]);
    });
  });
});
