import { AntennaPod } from '../support/clients/antennapod';
import { Action, sameAction, serverFeeds, sorted, strings } from '../support/clients/answers';
import { afterSecond, Kasts } from '../support/clients/kasts';
import { Mygpo } from '../support/clients/mygpoclient';
import { episodeUrl, feedUrl, minutesAgo, play } from '../support/clients/podcasts';
import { basicOf } from '../support/clients/wire';
import { CastlogUnderTest, startCastlog } from '../support/start-castlog';

/**
 * Real podcast apps syncing with castlog's gpodder.net face, replayed request by request as their
 * sources send them (method, path, query, headers, body bytes), each answer checked for what the
 * app's own parser needs. The simulators in test/support/clients keep their local state (subscribed
 * feeds, queued changes, stored timestamps) as the apps do, so a second sync sends back the
 * timestamp the first one stored, and a second device of the same user sees the first one's changes.
 *
 * Every scenario starts from a fresh user and brings its devices to the state it is about through
 * the same requests the apps send; no scenario depends on another having run.
 */
describe('podcast apps syncing through the gpodder.net face, request by request', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres' })));
  afterAll(() => app?.close());

  describe('AntennaPod (GpodnetService over OkHttp: one Basic login, then its session cookie)', () => {
    const [A, B, C] = [feedUrl('antenna-a'), feedUrl('antenna-b'), feedUrl('antenna-c')];
    const playedA1 = play(A, 1, 1800, 1800);
    const playB7 = play(B, 7, 754, 3120);
    const deleteB6: Action = {
      podcast: B,
      episode: episodeUrl(B, 6),
      guid: 'b-6',
      action: 'delete',
      timestamp: minutesAgo(4),
    };
    const playA2 = play(A, 2, 42, 2400);

    const phoneOf = async () => new AntennaPod(app, await app.freshUser(), 'AntennaPod on Pixel 7');

    /** A phone signed in with A and B on it, A1 played, B7's play and B6's deletion queued. */
    const phoneReadyToSync = async () => {
      const phone = await phoneOf();
      await phone.signIn();
      phone.feeds.add(A);
      phone.feeds.add(B);
      phone.played = [playedA1];
      phone.queuedActions = [playB7, deleteB6];
      return phone;
    };

    /** The phone after its first sync, and a tablet of the same user with C on it, signed in. */
    const phoneSyncedAndTablet = async () => {
      const phone = await phoneReadyToSync();
      await phone.sync();
      const tablet = new AntennaPod(app, phone.user, 'AntennaPod on Galaxy Tab S9');
      tablet.feeds.add(C);
      return { phone, tablet, devices: await tablet.signIn() };
    };

    it('signs in: the login sets an HttpOnly session cookie that alone carries the device list and the new device', async () => {
      const phone = await phoneOf();
      expect(await phone.signIn()).toEqual([]);
      expect(phone.wire.jar.cookies.get('sessionid')).toEqual(
        expect.objectContaining({ httpOnly: true, secure: false }),
      );
      // Everything after the login went out with the cookie only.
      expect(await phone.getDevices()).toEqual([
        { id: 'antennapod_on_pixel_7', caption: 'AntennaPod on Pixel 7', type: 'mobile', subscriptions: 0 },
      ]);
    });

    it('a wrong password fails the login with 401, and without a session the next call is refused', async () => {
      const user = await app.freshUser();
      const stranger = new AntennaPod(
        app,
        { ...user, password: `${user.password}x` },
        'AntennaPod on Pixel 7',
      );
      const login = await stranger.sendLogin();
      expect(login.status).toBe(401);
      expect(login.body).toEqual({ code: '401', message: 'User not authorized' });
      expect(stranger.wire.jar.cookies.has('sessionid')).toBe(false);
      expect((await stranger.wire.send('GET', `/api/2/devices/${user.name}.json`)).status).toBe(401);
    });

    it('first sync: downloads since 0, uploads every local feed, uploads the queued and the played episodes', async () => {
      const phone = await phoneReadyToSync();
      await phone.sync();
      expect(phone.wire.exchanges).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^GET \/api\/2\/subscriptions\/\S+\/antennapod_on_pixel_7\.json\?since=0 → 200/,
          ),
          expect.stringMatching(/^GET \/api\/2\/episodes\/\S+\.json\?since=0 → 200/),
        ]),
      );
      expect(phone.lastSubscriptionSync).toBeGreaterThan(0);
      expect(phone.lastEpisodeSync).toBeGreaterThan(0);
      expect(sorted(phone.feeds)).toEqual(sorted([A, B]));
      expect(await serverFeeds(app, phone.user)).toEqual(sorted([A, B]));
      // The device counts the user's subscriptions now.
      expect((await phone.getDevices()).find((device) => device.id === phone.deviceId)?.subscriptions).toBe(
        2,
      );
    });

    it("a second device of the same user gets the first one's feeds and episode actions, and adds its own", async () => {
      const { phone, tablet, devices } = await phoneSyncedAndTablet();
      expect(devices.map((device) => device.id)).toEqual([phone.deviceId]);
      await tablet.sync();
      expect(sorted(tablet.feeds)).toEqual(sorted([A, B, C]));
      expect(tablet.received.map(sameAction)).toEqual(
        expect.arrayContaining([playedA1, playB7, deleteB6].map(sameAction)),
      );
      expect(tablet.received.find((action) => action.episode === playB7.episode)).toEqual(
        expect.objectContaining({ guid: playB7.guid, device: phone.deviceId }),
      );
      expect(await serverFeeds(app, phone.user)).toEqual(sorted([A, B, C]));
    });

    it("second sync: sends back the stored timestamps and sees the other device's changes, a removal included", async () => {
      const { phone, tablet } = await phoneSyncedAndTablet();
      await tablet.sync();
      const { user } = phone;
      const since = { subscriptions: phone.lastSubscriptionSync, episodes: phone.lastEpisodeSync };
      tablet.unsubscribe(B);
      tablet.queuedActions = [playA2];
      await tablet.sync();
      expect(sorted(tablet.feeds)).toEqual(sorted([A, C]));

      const received = phone.received.length;
      await phone.sync();
      expect(phone.wire.exchanges).toEqual(
        expect.arrayContaining([
          expect.stringContaining(
            `GET /api/2/subscriptions/${user.name}/${phone.deviceId}.json?since=${since.subscriptions} → 200`,
          ),
          expect.stringContaining(`GET /api/2/episodes/${user.name}.json?since=${since.episodes} → 200`),
        ]),
      );
      expect(sorted(phone.feeds)).toEqual(sorted([A, C]));
      expect(phone.received.slice(received).map(sameAction)).toContainEqual(sameAction(playA2));
      expect(phone.lastSubscriptionSync).toBeGreaterThanOrEqual(since.subscriptions);
      expect(await serverFeeds(app, user)).toEqual(sorted([A, C]));
    });
  });

  describe('Kasts (gpodder.cpp: Basic on every request, JSON-typed posts, timestamps stored plus one)', () => {
    const [D, E, F] = [feedUrl('kasts-d'), feedUrl('kasts-e'), feedUrl('kasts-f')];
    const playD1 = play(D, 1, 300);
    const downloadD2: Action = {
      podcast: D,
      episode: episodeUrl(D, 2),
      guid: 'd-2',
      action: 'download',
      timestamp: minutesAgo(3),
    };
    const playF1 = play(F, 1, 95);

    /** A laptop with D and E on it, signed in as a fresh user's first device. */
    const signedInLaptop = async () => {
      const laptop = new Kasts(app, await app.freshUser(), 'thinkpad');
      laptop.feeds.add(D);
      laptop.feeds.add(E);
      await laptop.signIn('Kasts on thinkpad', 'laptop');
      return laptop;
    };

    /** The laptop after its first sync, which uploaded D1's play (and queued D2's download). */
    const syncedLaptop = async () => {
      const laptop = await signedInLaptop();
      laptop.episodeActions = [playD1, downloadD2];
      await laptop.sync();
      return laptop;
    };

    /** The synced laptop and a desktop of the same user with F on it, signed in a second later. */
    const syncedLaptopAndDesktop = async () => {
      const laptop = await syncedLaptop();
      // Kasts downloads from its stored timestamp + 1: the other device acts in a later second.
      await afterSecond(laptop.lastAnswered);
      const desktop = new Kasts(app, laptop.user, 'workstation');
      desktop.feeds.add(F);
      await desktop.signIn('Kasts on workstation', 'desktop');
      return { laptop, desktop };
    };

    /** …after which the desktop synced, unsubscribed from E, played F1 and synced again. */
    const desktopChangedSome = async (desktop: Kasts) => {
      await desktop.sync();
      desktop.unsubscribe(E);
      desktop.episodeActions = [playF1];
      await desktop.sync();
    };

    it('signs in: the device list, a new device, every device linked, the union of their subscriptions uploaded', async () => {
      const laptop = await signedInLaptop();
      expect(laptop.devices).toEqual([]);
      expect(await laptop.getDevices()).toEqual([
        { id: 'kasts-thinkpad', caption: 'Kasts on thinkpad', type: 'laptop', subscriptions: 0 },
      ]);
      expect(await laptop.getSyncStatus()).toEqual({ synced: [['kasts-thinkpad']], unsynced: [] });
    });

    it('a server address entered with a trailing slash: the doubled slash in every path reaches the same routes', async () => {
      const user = await app.freshUser();
      // Kasts keeps `https://host/` as entered and appends `/api/2/…` to it.
      const devices = async (base: string) => {
        const response = await fetch(`${base}/api/2/devices/${user.name}.json`, {
          headers: { authorization: basicOf(user), 'user-agent': 'Kasts/25.04.0 Syndication' },
        });
        return { status: response.status, body: await response.json() };
      };
      const doubled = await devices(`${app.url}/`);
      expect(doubled.status).toBe(200);
      expect(doubled).toEqual(await devices(app.url));
    });

    it('first sync: since 0 with aggregated=true, every local feed uploaded, only play actions uploaded', async () => {
      const laptop = await syncedLaptop();
      expect(laptop.wire.exchanges).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^GET \/api\/2\/subscriptions\/\S+\/kasts-thinkpad\.json\?since=0 → 200/),
          expect.stringMatching(/^GET \/api\/2\/episodes\/\S+\.json\?since=0&aggregated=true → 200/),
        ]),
      );
      expect(await serverFeeds(app, laptop.user)).toEqual(sorted([D, E]));
      expect(laptop.subscriptionTimestamp).toBeGreaterThan(1_600_000_000);
      expect(laptop.episodeTimestamp).toBeGreaterThan(1_600_000_000);
    });

    it("a second device of the same user links up, gets the first one's feeds and plays, and changes some", async () => {
      const { laptop, desktop } = await syncedLaptopAndDesktop();
      expect(desktop.devices.map((device) => device.id)).toEqual(['kasts-thinkpad']);
      const status = await desktop.getSyncStatus();
      expect(status.unsynced).toEqual([]);
      expect(status.synced.map((group) => sorted(group))).toEqual([['kasts-thinkpad', 'kasts-workstation']]);

      await desktop.sync();
      expect(sorted(desktop.feeds)).toEqual(sorted([D, E, F]));
      expect(desktop.received.map(sameAction)).toContainEqual(sameAction(playD1));
      // Kasts uploads play actions only.
      expect(desktop.received.map((action) => action.episode)).not.toContain(downloadD2.episode);

      desktop.unsubscribe(E);
      desktop.episodeActions = [playF1];
      await desktop.sync();
      expect(await serverFeeds(app, laptop.user)).toEqual(sorted([D, F]));
    });

    it("second sync: since is the stored timestamp (+1), aggregated=false, and brings the other device's removal and play", async () => {
      const { laptop, desktop } = await syncedLaptopAndDesktop();
      await desktopChangedSome(desktop);
      const { user } = laptop;
      const since = laptop.subscriptionTimestamp;
      const episodesSince = laptop.episodeTimestamp;
      await laptop.sync();
      expect(laptop.wire.exchanges).toEqual(
        expect.arrayContaining([
          expect.stringContaining(
            `GET /api/2/subscriptions/${user.name}/kasts-thinkpad.json?since=${since} → 200`,
          ),
          expect.stringContaining(
            `GET /api/2/episodes/${user.name}.json?since=${episodesSince}&aggregated=false → 200`,
          ),
        ]),
      );
      expect(sorted(laptop.feeds)).toEqual(sorted([D, F]));
      expect(laptop.received.map(sameAction)).toContainEqual(sameAction(playF1));
    });

    it('logs out: the session its cookie carried ends', async () => {
      const laptop = await signedInLaptop();
      const { user } = laptop;
      // Responses to Basic requests set the session cookie, which Kasts' cookie jar sends back.
      const cookie = laptop.wire.jar.header(`/api/2/devices/${user.name}.json`);
      expect(cookie).toMatch(/(^|; )sessionid=/);
      const before = await app.anonymous.request('GET', `/api/2/devices/${user.name}.json`, {
        headers: { cookie: cookie! },
      });
      expect(before.status).toBe(200);
      await laptop.logout();
      const after = await app.anonymous.request('GET', `/api/2/devices/${user.name}.json`, {
        headers: { cookie: cookie! },
      });
      expect(after.status).toBe(401);
      expect(after.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
    });
  });

  describe('mygpoclient (raw HTTP: no credentials until challenged, then the session cookie)', () => {
    const [G, H, I, J] = [feedUrl('mygpo-g'), feedUrl('mygpo-h'), feedUrl('mygpo-i'), feedUrl('mygpo-j')];
    const playG1 = { ...play(G, 1, 1200), device: 'gpodder-desktop' };
    const downloadG2: Action = {
      podcast: G,
      episode: G.replace(/feed\.xml$/, 'épisode-2.mp3'),
      action: 'download',
      device: 'gpodder-desktop',
      timestamp: minutesAgo(2),
    };
    const otherSpelling = G.replace('https://mygpo-g.example.com/', 'HTTPS://MYGPO-G.Example.COM:443/');
    const bad = 'mygpo-bad.example.com/feed.xml';

    /** A fresh user's desktop after its first sync: G and H subscribed, G1's play and G2's download. */
    const syncedDesktop = async () => {
      const desktop = new Mygpo(app, await app.freshUser(), 'gpodder-desktop');
      desktop.subscribe(G);
      desktop.subscribe(H);
      desktop.actions = [playG1, downloadG2];
      await desktop.sync('gPodder on desktop');
      return desktop;
    };

    /** The synced desktop and a laptop of the same user that synced G in another spelling, I and a
     * URL without a scheme. */
    const syncedDesktopAndLaptop = async () => {
      const desktop = await syncedDesktop();
      const laptop = new Mygpo(app, desktop.user, 'gpodder-laptop');
      laptop.subscribe(otherSpelling);
      laptop.subscribe(I);
      laptop.subscribe(bad);
      await laptop.sync('gPodder on laptop');
      return { desktop, laptop };
    };

    it('answers the first request with a Basic challenge; the retry sets the session cookie and nothing later is challenged', async () => {
      const desktop = await syncedDesktop();
      const [first, second] = desktop.wire.exchanges;
      expect(first).toMatch(/^POST \/api\/2\/devices\/\S+\/gpodder-desktop\.json → 401/);
      expect(second).toMatch(/^POST \/api\/2\/devices\/\S+\/gpodder-desktop\.json → 200 $/);
      expect(desktop.wire.jar.cookies.has('sessionid')).toBe(true);
      expect(await desktop.getDevices()).toEqual([
        { id: 'gpodder-desktop', caption: 'gPodder on desktop', type: 'desktop', subscriptions: 2 },
      ]);
      // One challenge for the whole sync: urllib's password manager would give up after three.
      expect(desktop.challenges).toBe(1);
      expect(desktop.wire.exchanges.length).toBeGreaterThan(4);
      expect(await serverFeeds(app, desktop.user)).toEqual(sorted([G, H]));
    });

    it("a second device pulls the first one's feeds and actions; its other spelling of a URL and a bad URL come back in update_urls", async () => {
      const { desktop, laptop } = await syncedDesktopAndLaptop();
      const { user } = desktop;
      expect(laptop.challenges).toBe(1);
      // gPodder rewrites its copy of the URL to the stored spelling; the refused one goes.
      expect(sorted(laptop.feeds)).toEqual(sorted([G, H, I, bad]));
      expect(laptop.updatedUrls).toEqual(
        expect.arrayContaining([
          [otherSpelling, G],
          [bad, ''],
        ]),
      );
      expect(laptop.received.map(sameAction)).toEqual(
        expect.arrayContaining([playG1, downloadG2].map(sameAction)),
      );
      expect(laptop.received.find((action) => action.action === 'download')?.episode).toBe(
        downloadG2.episode,
      );
      expect(await serverFeeds(app, user)).toEqual(sorted([G, H, I]));

      // The first device's next sync sends back its stored since and gets the new feed.
      const since = desktop.podcastsSince;
      await desktop.sync('gPodder on desktop');
      expect(desktop.wire.exchanges).toContainEqual(
        expect.stringContaining(
          `GET /api/2/subscriptions/${user.name}/gpodder-desktop.json?since=${since} → 200`,
        ),
      );
      expect(sorted(desktop.feeds)).toEqual(sorted([G, H, I]));
      expect(desktop.challenges).toBe(1);
    });

    it("the simple API: a device's list as JSON, replaced by a PUT answered empty, and the user's OPML with Basic", async () => {
      const { laptop } = await syncedDesktopAndLaptop();
      const { user } = laptop;
      const listed = await laptop.request('GET', `/subscriptions/${user.name}/gpodder-laptop.json`);
      expect(strings(listed.json) && sorted(listed.json)).toEqual(sorted([G, H, I]));
      const put = await laptop.request('PUT', `/subscriptions/${user.name}/gpodder-laptop.json`, [G, J]);
      // put_subscriptions: `PUT(...) is None`, so only an empty answer is a success.
      expect(put.response.text).toBe('');
      const replaced = await laptop.request('GET', `/subscriptions/${user.name}/gpodder-laptop.json`);
      expect(strings(replaced.json) && sorted(replaced.json)).toEqual(sorted([G, J]));
      expect(laptop.challenges).toBe(1);

      // gPodder's OPML download (a plain fetch: test/support's OpenAPI check reads JSON answers only).
      const opml = await fetch(new URL(`/subscriptions/${user.name}.opml`, app.url), {
        headers: { authorization: basicOf(user), 'user-agent': 'gPodder/3.11.4' },
      });
      const document = await opml.text();
      expect(opml.status).toBe(200);
      expect(opml.headers.get('content-type')).toMatch(/^(text\/x-opml|application\/xml|text\/xml)\b/);
      expect(document).toMatch(/<opml[^>]*version="2\.0"/);
      const xmlUrls = [...document.matchAll(/xmlUrl="([^"]*)"/g)].map((match) => match[1]);
      expect(sorted(xmlUrls as string[])).toEqual(sorted([G, J]));
    });

    it('wrong credentials: the challenged retry is refused too, with the error body and no session', async () => {
      const user = await app.freshUser();
      const stranger = new Mygpo(app, { ...user, password: `${user.password}x` }, 'gpodder-desktop');
      const path = `/api/2/devices/${user.name}.json`;
      const challenged = await stranger.wire.send('GET', path);
      expect(challenged.status).toBe(401);
      expect(challenged.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
      const refused = await stranger.wire.send('GET', path, { authorization: basicOf(stranger.user) });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ code: '401', message: 'User not authorized' });
      expect(refused.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
      expect(stranger.wire.jar.cookies.has('sessionid')).toBe(false);
    });
  });

  describe('AntennaPod, Kasts and gPodder on one account', () => {
    it("converge on one subscription list and see each other's episode actions", async () => {
      const user = await app.freshUser();
      const phone = new AntennaPod(app, user, 'AntennaPod on Fairphone 5');
      const laptop = new Kasts(app, user, 'framework');
      const desktop = new Mygpo(app, user, 'gpodder-tower');
      const [P1, P2, P3] = [feedUrl('mix-1'), feedUrl('mix-2'), feedUrl('mix-3')];
      const plays = {
        phone: play(P1, 1, 600),
        laptop: play(P2, 1, 700),
        desktop: { ...play(P3, 1, 800), device: 'gpodder-tower' },
      };

      phone.feeds.add(P1);
      phone.queuedActions = [plays.phone];
      await phone.signIn();
      await phone.sync();

      laptop.feeds.add(P2);
      laptop.episodeActions = [plays.laptop];
      await laptop.signIn('Kasts on framework', 'laptop');
      await laptop.sync();

      await afterSecond(laptop.lastAnswered);
      desktop.subscribe(P3);
      desktop.actions = [plays.desktop];
      await desktop.sync('gPodder on tower');

      await phone.sync();
      await laptop.sync();
      await desktop.sync('gPodder on tower');
      const all = sorted([P1, P2, P3]);
      expect(await serverFeeds(app, user)).toEqual(all);
      expect([sorted(phone.feeds), sorted(laptop.feeds), sorted(desktop.feeds)]).toEqual([all, all, all]);
      expect(phone.received.map(sameAction)).toEqual(
        expect.arrayContaining([plays.laptop, plays.desktop].map(sameAction)),
      );
      expect(laptop.received.map(sameAction)).toEqual(
        expect.arrayContaining([plays.phone, plays.desktop].map(sameAction)),
      );
      expect(desktop.received.map(sameAction)).toEqual(
        expect.arrayContaining([plays.phone, plays.laptop].map(sameAction)),
      );

      // One of them unsubscribes; the next round removes it everywhere.
      await afterSecond(laptop.lastAnswered);
      desktop.unsubscribe(P1);
      await desktop.sync('gPodder on tower');
      await phone.sync();
      await laptop.sync();
      const rest = sorted([P2, P3]);
      expect(await serverFeeds(app, user)).toEqual(rest);
      expect([sorted(phone.feeds), sorted(laptop.feeds), sorted(desktop.feeds)]).toEqual([rest, rest, rest]);
      const devices = await desktop.getDevices();
      expect(sorted(devices.map((device) => device.id))).toEqual([
        'antennapod_on_fairphone_5',
        'gpodder-tower',
        'kasts-framework',
      ]);
      expect(devices.every((device) => device.subscriptions === 2)).toBe(true);
    });
  });
});
