import { ApiResponse } from '../support/api-client';
import { GPODDER_INVALID as INVALID, errorBody, feed } from '../support/contract';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

interface Changes {
  add: string[];
  remove: string[];
  timestamp: number;
}

const sorted = (list: readonly string[]) => [...list].sort();

// On the Kafka log, as the service runs scaled.
describe('gpodder.net subscriptions: /api/2/subscriptions/{user}/{device}.json', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  const path = (user: TestUser, device = 'phone') => `/api/2/subscriptions/${user.name}/${device}.json`;
  const upload = (add: unknown[], remove: unknown[] = [], device = 'phone', user = alice) =>
    app.as(user).post(path(user, device), { add, remove });
  const uploadRaw = (rawBody: string, headers: Record<string, string> = {}) =>
    app.as(alice).request('POST', path(alice), { rawBody, headers });
  const changes = (since?: number | string, device = 'phone', user = alice) =>
    app
      .as(user)
      .get<Changes>(
        `${path(user, device)}${since === undefined ? '' : `?since=${encodeURIComponent(since)}`}`,
      );
  const expect400 = (response: ApiResponse, detail?: string | RegExp) => {
    expect(response.status).toBe(400);
    expect(response.body).toEqual(INVALID(detail));
  };

  describe('POST: upload changes', () => {
    it('subscribes to the added URLs and answers an integer timestamp (Unix seconds) and update_urls', async () => {
      const [a, b] = [feed('a'), feed('b')];
      const response = await upload([a, b]);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body).toEqual({ timestamp: expect.any(Number), update_urls: [] });
      expect(Number.isInteger(response.body.timestamp)).toBe(true);
      expect(response.body.timestamp).toBeGreaterThan(1_600_000_000);
      // read your writes: the next download has them
      const after = await changes();
      expect(sorted(after.body.add)).toEqual(sorted([a, b]));
      expect(after.body).toEqual({ add: expect.any(Array), remove: [], timestamp: response.body.timestamp });
    });

    it('unsubscribes a removed URL: gone from the list, in the next download since as a remove', async () => {
      const [a, b] = [feed('a'), feed('b')];
      const first = await upload([a, b]);
      const second = await upload([], [a]);
      expect(second.status).toBe(200);
      expect(second.body.update_urls).toEqual([]);
      expect(second.body.timestamp).toBeGreaterThanOrEqual(first.body.timestamp);
      expect((await changes()).body).toEqual({ add: [b], remove: [], timestamp: second.body.timestamp });
      const since = await changes(first.body.timestamp);
      expect(since.body.remove).toEqual([a]);
      expect(since.body.add).not.toContain(a);
      // an unsubscribe, not a deletion: the Open Podcast API still has the subscription
      const listed = await app.as(alice).get('/v1/subscriptions');
      expect(listed.body.subscriptions).toContainEqual(
        expect.objectContaining({ feed_url: a, is_subscribed: false }),
      );
    });

    it('reports a URL the rules refuse as [url, ""] and applies the rest', async () => {
      const ok = feed('ok');
      const response = await upload(
        [ok, 'ftp://example.com/rss', 'example.com/rss'],
        ['gopher://example.com/'],
      );
      expect(response.status).toBe(200);
      expect(sorted(response.body.update_urls.map((pair: string[]) => pair.join(' | ')))).toEqual(
        sorted(['ftp://example.com/rss | ', 'example.com/rss | ', 'gopher://example.com/ | ']),
      );
      expect((await changes()).body.add).toEqual([ok]);
    });

    it('reports a URL stored in another spelling as [sent, stored], and keeps the stored one', async () => {
      const stored = feed('spelt');
      expect((await upload([stored])).status).toBe(200);
      const sent = stored.replace('https://', 'HTTPS://').replace('.com/', '.com:443/') + '#top';
      const response = await upload([sent]);
      expect(response.body.update_urls).toEqual([[sent, stored]]);
      expect((await changes()).body.add).toEqual([stored]);
      // removing it in another spelling reaches it too
      const removed = await upload([], [sent]);
      expect(removed.body.update_urls).toEqual([[sent, stored]]);
      expect((await changes()).body.add).toEqual([]);
    });

    it('refuses a URL both added and removed with 400 (after normalising), and changes nothing', async () => {
      const [a, b] = [feed('a'), feed('b')];
      expect400(await upload([a, b], [b]), `${b} is both added and removed`);
      expect400(await upload([a], [a.replace('https://', 'HTTPS://')]), /is both added and removed$/);
      expect((await changes()).body.add).toEqual([]);
    });

    it('removing a URL nobody holds changes nothing and reports nothing', async () => {
      const response = await upload([], [feed('never')]);
      expect(response.status).toBe(200);
      expect(response.body.update_urls).toEqual([]);
      expect((await changes()).body).toEqual({ add: [], remove: [], timestamp: expect.any(Number) });
    });

    describe('feed URLs with white space around them (gpodder.net trims them first)', () => {
      it('subscribes to the trimmed URL and reports [sent, trimmed]; a spaced remove unsubscribes', async () => {
        const [spaced, rs] = [feed('spaced'), feed('rs')];
        expect((await upload([rs])).status).toBe(200);
        const added = await upload([` ${spaced}`]);
        expect(added.status).toBe(200);
        expect(added.body.update_urls).toEqual([[` ${spaced}`, spaced]]);
        expect(sorted((await changes()).body.add)).toEqual(sorted([spaced, rs]));

        const removed = await upload([], [`${rs} `]);
        expect(removed.body.update_urls).toEqual([[`${rs} `, rs]]);
        const after = await changes(added.body.timestamp);
        expect(after.body).toEqual({ add: [spaced], remove: [rs], timestamp: removed.body.timestamp });
        // one subscription each, unsubscribed rather than deleted, through /v1 too
        const listed = (await app.as(alice).get('/v1/subscriptions')).body.subscriptions;
        expect(
          listed.map((s: { feed_url: string; is_subscribed: boolean }) => [s.feed_url, s.is_subscribed]),
        ).toEqual(
          expect.arrayContaining([
            [spaced, true],
            [rs, false],
          ]),
        );
        expect(listed).toHaveLength(2);
      });

      it("trims every white space Python's strip() does, then applies castlog's rules to what is left", async () => {
        const [a, b, stored] = [feed('tabs'), feed('nbsp'), feed('spelt')];
        expect((await upload([stored])).status).toBe(200);
        const otherSpelling = stored.replace('https://', 'HTTPS://').replace('.com/', '.com:443/');
        const sent = [
          `\t${a}\r\n`,
          `\u00a0\u3000${b}\u2028`,
          ` ${otherSpelling}`,
          ' ftp://example.com/rss ',
          ' \t ',
          `\u200b${feed('zero-width')}`,
        ];
        const response = await upload(sent);
        expect(response.status).toBe(200);
        expect(sorted(response.body.update_urls.map((pair: string[]) => JSON.stringify(pair)))).toEqual(
          sorted(
            [
              [sent[0], a],
              [sent[1], b],
              [sent[2], stored],
              [sent[3], ''],
              [sent[4], ''],
              // a zero-width space is no white space: the URL stays invalid
              [sent[5], ''],
            ].map((pair) => JSON.stringify(pair)),
          ),
        );
        expect(sorted((await changes()).body.add)).toEqual(sorted([a, b, stored]));
      });

      it('refuses a URL added and removed once trimmed, with 400', async () => {
        const a = feed('both');
        expect400(await upload([` ${a}`], [`${a}\n`]), `${a} is both added and removed`);
        expect((await changes()).body.add).toEqual([]);
      });

      it('leaves /v1 to its own rules: a spaced feed_url is refused there', async () => {
        const a = feed('v1');
        const response = await app
          .as(alice)
          .post('/v1/subscriptions', { subscriptions: [{ feed_url: ` ${a}` }] });
        expect(response.status).toBe(200);
        expect(response.body.failure).toEqual([{ feed_url: ` ${a}`, message: 'Invalid URL' }]);
      });
    });

    it('reads the body as JSON whatever the Content-Type (mygpoclient labels it form-urlencoded)', async () => {
      const [a, b] = [feed('a'), feed('b')];
      const form = await uploadRaw(JSON.stringify({ add: [a], remove: [] }), {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(form.status).toBe(200);
      const text = await uploadRaw(JSON.stringify({ add: [b] }), { 'content-type': 'text/plain' });
      expect(text.status).toBe(200);
      expect(sorted((await changes()).body.add)).toEqual(sorted([a, b]));
    });

    it('refuses a body that is not {add?: [url], remove?: [url]} with 400', async () => {
      const cases: [string, string | RegExp][] = [
        ['', 'the body is not JSON'],
        ['{"add": [', 'the body is not JSON'],
        ['add=x', 'the body is not JSON'],
        ['[]', 'the body must be a JSON object'],
        ['null', 'the body must be a JSON object'],
        ['{"add": "https://a.example/rss"}', 'add must be an array of URLs'],
        ['{"remove": {}}', 'remove must be an array of URLs'],
        ['{"add": ["https://a.example/\\u0000"]}', /U\+0000/],
        ['{"add": [], "x": 1e400}', 'numbers must be finite (a number as large as 1e400 is not)'],
      ];
      for (const [rawBody, detail] of cases) expect400(await uploadRaw(rawBody), detail);
      const tooMany = Array.from({ length: 10_001 }, (_, i) => `https://m.example/${i}`);
      expect400(await upload(tooMany), 'add must hold at most 10000 URLs');
      expect((await changes()).body.add).toEqual([]);
    });

    it('refuses a device id outside [A-Za-z0-9._-]{1,64} with 400', async () => {
      for (const device of ['x'.repeat(65), 'my%20phone', 'a:b'])
        expect400(await upload([feed()], [], device), 'the device id must be 1 to 64 of A-Z a-z 0-9 . _ -');
      expect((await app.as(alice).get(`/api/2/devices/${alice.name}.json`)).body).toEqual([]);
    });

    it("answers 401 for another user's path and changes nothing of theirs", async () => {
      const bob = await app.freshUser();
      const response = await app.as(alice).post(path(bob), { add: [feed()], remove: [] });
      expect(response.status).toBe(401);
      expect(response.body).toEqual(errorBody(401, 'User not authorized'));
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
      expect((await changes(undefined, 'phone', bob)).body.add).toEqual([]);
    });
  });

  describe('GET: download changes since', () => {
    it('without since, or since=0: every subscribed URL in add, remove empty', async () => {
      const [a, b] = [feed('a'), feed('b')];
      await upload([a, b]);
      await upload([], [a]);
      for (const since of [undefined, 0, '0', '00']) {
        const response = await changes(since);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ add: [b], remove: [], timestamp: expect.any(Number) });
      }
    });

    it('answers a timestamp that, sent back as since, gives only what changed from then on', async () => {
      const [a, b] = [feed('a'), feed('b')];
      await upload([a]);
      const first = await changes();
      // another device subscribes later
      const later = await upload([b], [], 'laptop');
      const next = await changes(first.body.timestamp);
      expect(next.body.add).toContain(b);
      expect(next.body.timestamp).toBe(later.body.timestamp);
      const after = await changes(later.body.timestamp + 1);
      expect(after.body).toEqual({ add: [], remove: [], timestamp: later.body.timestamp });
    });

    it('since is inclusive: a client that sends back the last timestamp misses no change made within the same second', async () => {
      // Two changes in one second: the phone syncs right after its own upload, the laptop changes
      // something in the same second; the phone's next sync, since that second, must see it.
      let attempts = 0;
      for (;;) {
        attempts += 1;
        const user = await app.freshUser();
        const [a, b] = [feed('a'), feed('b')];
        await upload([a], [], 'phone', user);
        const phoneSync = await changes(undefined, 'phone', user);
        const laptop = await upload([b], [], 'laptop', user);
        if (laptop.body.timestamp !== phoneSync.body.timestamp) {
          expect(attempts).toBeLessThan(20);
          continue;
        }
        const next = await changes(phoneSync.body.timestamp, 'phone', user);
        expect(sorted(next.body.add)).toEqual(sorted([a, b]));
        // an exclusive since (the second after) would have missed the laptop's change
        expect((await changes(phoneSync.body.timestamp + 1, 'phone', user)).body.add).toEqual([]);
        break;
      }
    });

    it('sees two changes made within the same second, from two devices, both', async () => {
      let attempts = 0;
      for (;;) {
        attempts += 1;
        const user = await app.freshUser();
        // the reading device exists beforehand: its first use is a change and moves the clock
        await changes(undefined, 'tablet', user);
        const [a, b] = [feed('a'), feed('b')];
        const one = await upload([a], [], 'phone', user);
        const two = await upload([b], [], 'laptop', user);
        if (one.body.timestamp !== two.body.timestamp) {
          expect(attempts).toBeLessThan(20);
          continue;
        }
        const seen = await changes(one.body.timestamp, 'tablet', user);
        expect(sorted(seen.body.add)).toEqual(sorted([a, b]));
        expect(seen.body.timestamp).toBe(two.body.timestamp);
        break;
      }
    });

    it('refuses a since that is not a non-negative integer with 400', async () => {
      for (const since of ['-1', '1.5', 'abc', '', '1e3', ' 1', '+1', '0x10', '2023-02-23T14:00:00Z'])
        expect400(await changes(since), 'since must be a non-negative integer (Unix seconds)');
      expect400(await app.as(alice).get(`${path(alice)}?since=1&since=2`), 'since must be given once');
    });

    it('reads a since far in the future as nothing changed since', async () => {
      await upload([feed()]);
      const response = await changes('99999999999999999999');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ add: [], remove: [], timestamp: expect.any(Number) });
    });

    it('refuses a device id outside the pattern with 400, and creates no device', async () => {
      expect400(
        await changes(undefined, 'bad%20device'),
        'the device id must be 1 to 64 of A-Z a-z 0-9 . _ -',
      );
      expect((await app.as(alice).get(`/api/2/devices/${alice.name}.json`)).body).toEqual([]);
    });

    it("answers 401 for another user's path, and creates no device for them", async () => {
      const bob = await app.freshUser();
      const response = await app.as(alice).get(path(bob, 'sneaky'));
      expect(response.status).toBe(401);
      expect((await app.as(bob).get(`/api/2/devices/${bob.name}.json`)).body).toEqual([]);
    });
  });
});
