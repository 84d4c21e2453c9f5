import { parseOpml } from '@castlog/opml';
import { startTestServer, TestServer } from '../../libs/feeds/src/testing/test-server';
import { uniqueName } from '../support/databases';
import { RunningChild, startChild } from '../support/processes';
import { CastlogUnderTest, childProjectorEnv, startCastlog } from '../support/start-castlog';

const RSS = (title: string) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>${title}</title></channel></rss>`;

/**
 * The scaled mode's feed resolver: the built `apps/resolver` as a process of its own beside the API
 * and the projector, on Kafka. It names the feeds it fetched in the OPML export, moves a
 * subscription whose feed answers a permanent redirect, and stops cleanly on SIGTERM. The resolver
 * is the built app (`npm run build`).
 */
describe('the feed resolver as a process of its own, on Kafka', () => {
  let server: TestServer;
  let app: CastlogUnderTest;
  let resolver: RunningChild;

  beforeAll(async () => {
    server = await startTestServer((request, response) => {
      if (request.url === '/old.xml') response.writeHead(301, { location: '/new.xml' }).end();
      else response.writeHead(200, { 'content-type': 'application/rss+xml' }).end(RSS(`Show ${request.url}`));
    });
    app = await startCastlog({ log: 'kafka' });
    resolver = startChild(
      'resolver',
      childProjectorEnv(app, {
        FEEDS_GROUP: uniqueName('resolver'),
        FEEDS_ALLOWED_RANGES: '127.0.0.1/32',
        FEED_REFRESH_INTERVAL: '1s',
        LOG_LEVEL: 'info',
      }),
    );
    await resolver.waitForOutput(/fetching subscribed feeds every 1 s/, 60_000);
  });
  afterAll(async () => {
    if (resolver?.child.exitCode === null) resolver.child.kill('SIGKILL');
    await app?.close();
    await server?.close();
  });

  it('names the feeds in the export and moves a subscription whose feed moved for good', async () => {
    const user = await app.freshUser();
    const [named, moved, home] = ['/named.xml', '/old.xml', '/new.xml'].map((path) => server.url(path));
    const added = await app.as(user).post('/v1/subscriptions', {
      subscriptions: [{ feed_url: named }, { feed_url: moved }],
    });
    expect(added.status).toBe(200);
    const exported = async () => {
      const response = await fetch(new URL(`/subscriptions/${user.name}.opml`, app.url), {
        headers: { authorization: `Bearer ${user.token}` },
      });
      return new Map(parseOpml(await response.text()).feeds.map((feed) => [feed.url, feed.title]));
    };
    const names = await resolver.explaining(
      app.until(
        'both feeds named, the moved one under its new URL',
        async () => {
          const current = await exported();
          return current.get(named) === 'Show /named.xml' && current.get(home) === 'Show /new.xml'
            ? current
            : undefined;
        },
        60_000,
      ),
    );
    expect([...names.keys()].sort()).toEqual([home, named].sort());
    expect(resolver.output()).toMatch(
      /moved to .*\/new\.xml \(permanent-redirect\): a move appended for 1 user/,
    );

    resolver.child.kill('SIGTERM');
    expect(await resolver.exited(30_000)).toEqual({ code: 0, signal: null });
  });
});
