import { parseOpml } from '@castlog/opml';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startTestServer, TestServer } from '../../libs/feeds/src/testing/test-server';
import { terminateBackends } from '../support/databases';
import { poll } from '../support/until';
import { CastlogUnderTest, EventLogKind, startCastlog, TestUser } from '../support/start-castlog';
import { basicOf, syncAction, syncClientOf } from '../support/sync-face';

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

/** A feed that names where it moved, as a publisher leaving a host writes it. */
const ANNOUNCING = (home: string) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
  <channel><title>Tea &amp; Servers (old home)</title><itunes:new-feed-url>${home}</itunes:new-feed-url></channel>
</rss>`;

/** Redirects: `/moved/…` answers 301 to `/moving/…`, which answers 308 to `/home/…` (a chain of
 * permanent redirects); `/away/…` answers 302 to `/visit/…` (temporary). `/announcing/…` names
 * `/announced/…` as its new-feed-url. Every other path is the feed. */
const REDIRECTS: readonly (readonly [string, number, string])[] = [
  ['/moved/', 301, '/moving/'],
  ['/moving/', 308, '/home/'],
  ['/away/', 302, '/visit/'],
];

/** Serves RSS at every path, answering 304 to a request that sends its ETag back. */
const serveFeed = (request: IncomingMessage, response: ServerResponse) => {
  const path = request.url ?? '/';
  const redirect = REDIRECTS.find(([prefix]) => path.startsWith(prefix));
  if (redirect) {
    const [prefix, status, target] = redirect;
    response.writeHead(status, { location: target + path.slice(prefix.length) }).end();
    return;
  }
  if (path.startsWith('/announcing/')) {
    const home = `http://${request.headers.host}/announced/${path.slice('/announcing/'.length)}`;
    response.writeHead(200, { 'content-type': 'application/rss+xml' }).end(ANNOUNCING(home));
    return;
  }
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
      // gpodder.net's podcast XML names them alike, escaped.
      const xml = await fetch(new URL(`/subscriptions/${alice.name}.xml`, app.url), {
        headers: { authorization: `Bearer ${alice.token}` },
      });
      expect(xml.headers.get('content-type')).toBe('application/xml; charset=utf-8');
      const podcasts = [
        ...(await xml.text()).matchAll(/<podcast>\s*<title>(.*)<\/title>\s*<url>(.*)<\/url>\s*<\/podcast>/g),
      ].map(([, title, listed]) => [listed, title] as const);
      expect(new Map(podcasts)).toEqual(
        new Map([
          [url, 'Tea &amp; Servers'],
          [unnamed, unnamed],
        ]),
      );
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

    it('moves the subscriptions of every face to where permanent redirects lead; a temporary one moves nothing', async () => {
      const alice = await app.freshUser();
      const opa = app.as(alice);
      const gpodder = app.anonymous.withAuthorization(basicOf(alice));
      const phone = syncClientOf(app, `Bearer ${alice.token}`);
      const [moved, home] = [server.url(`/moved/${log}.xml`), server.url(`/home/${log}.xml`)];
      const [synced, syncedHome] = [
        server.url(`/moved/sync-${log}.xml`),
        server.url(`/home/sync-${log}.xml`),
      ];
      const [uploaded, uploadedHome] = [
        server.url(`/moved/up-${log}.xml`),
        server.url(`/home/up-${log}.xml`),
      ];
      const away = server.url(`/away/${log}.xml`);
      const announcing = server.url(`/announcing/${log}.xml`);
      const added = await opa.post('/v1/subscriptions', {
        subscriptions: [{ feed_url: moved }, { feed_url: away }, { feed_url: announcing }],
      });
      expect(added.body.failure).toEqual([]);
      const [{ guid }] = added.body.success;
      const [subscribed] = await phone.sync([syncAction('subscribe', { feed_url: synced }, new Date())]);
      const upload = await gpodder.post(`/api/2/subscriptions/${alice.name}/phone.json`, {
        add: [uploaded],
        remove: [],
      });
      expect(upload.status).toBe(200);

      const feedUrls = async () => {
        const listed = await opa.get('/v1/subscriptions?per_page=100');
        return new Set<string>(
          listed.body.subscriptions.map((entry: { feed_url: string }) => entry.feed_url),
        );
      };
      await app.until('every subscription on a moved feed to move', async () => {
        const urls = await feedUrls();
        return [home, syncedHome, uploadedHome].every((url) => urls.has(url)) ? urls : undefined;
      });
      // The feed that announced its new home moves too; the one behind a 302 stays, though fetched.
      await app.until('the announced move', async () =>
        (await feedUrls()).has(server.url(`/announced/${log}.xml`)) ? true : undefined,
      );
      await app.until('the temporarily redirected feed to be named', async () =>
        (await exportedNames(app, alice)).get(away) === 'Tea & Servers' ? true : undefined,
      );
      const urls = await feedUrls();
      expect(urls.has(away)).toBe(true);
      expect([moved, synced, uploaded].filter((url) => urls.has(url))).toEqual([]);

      // /v1: the subscription keeps its guid, with the new feed_url.
      expect((await opa.get(`/v1/subscriptions/${guid}`)).body).toMatchObject({ guid, feed_url: home });
      // The sync face: an update of the same entity, made by no client.
      const { changes } = await phone.changes({ includeOwn: true });
      const change = changes.find((entry) => entry.data.sync_id === subscribed?.data.sync_id);
      expect(change?.data).toMatchObject({ feed_url: syncedHome });
      expect(change?.data.unsubscribed_at ?? null).toBeNull();
      // gpodder.net: the new URL added and the old removed, so every app follows the move.
      // Any change since the account began (the moves may come before the upload is answered).
      const download = await gpodder.get(`/api/2/subscriptions/${alice.name}/phone.json?since=1`);
      expect(download.body.add).toEqual(expect.arrayContaining([home, syncedHome, uploadedHome]));
      expect(download.body.remove).toEqual(expect.arrayContaining([moved, synced, uploaded]));
      expect(download.body.remove).not.toContain(away);
      // The temporary redirect was followed to fetch the feed, and changed no subscription.
      expect(server.requests.some((request) => request.path === `/visit/${log}.xml`)).toBe(true);
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
