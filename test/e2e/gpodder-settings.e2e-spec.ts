import { ApiResponse } from '../support/api-client';
import { GPODDER_INVALID as INVALID, errorBody, feed } from '../support/contract';
import { uniqueName } from '../support/databases';
import { runCli } from '../support/processes';
import { CastlogUnderTest, childProjectorEnv, startCastlog, TestUser } from '../support/start-castlog';

/**
 * gpodder.net's Settings API: GET and POST /api/2/settings/{user}/{account|device|podcast|episode}.json.
 *
 * - Each scope holds its own key-value pairs; POST `{set, remove}` answers the scope's settings after
 *   the change, GET answers them (`{}` when none). Set, then remove: a key in both ends removed.
 * - The scope's parameters (`device=`, `podcast=`, `podcast=&episode=`) are required: 400 without.
 * - Bounds (400 with the error body, never a 5xx): keys of 1 to 255 characters, values of at most
 *   16 KiB of JSON, at most 100 keys a scope (and in each list of a request), the body's nesting
 *   and content rules.
 * - Authentication as on every gpodder.net route; another user's path is 401; each user's settings
 *   are their own. A device scope's device is created by its first use.
 * - Every change is an event: `castlog replay --verify` finds the read model equal to a replay of
 *   the log, and `castlog history` describes each change.
 */

const basicOf = (user: TestUser) =>
  `Basic ${Buffer.from(`${user.name}:${user.password}`, 'utf8').toString('base64')}`;

type Scope = 'account' | 'device' | 'podcast' | 'episode';

describe('gpodder.net settings: /api/2/settings/{user}/{scope}.json', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres' })));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  const path = (scope: string, query = '', user: TestUser = alice) =>
    `/api/2/settings/${user.name}/${scope}.json${query}`;
  const read = (scope: Scope, query = '', user: TestUser = alice) =>
    app.as(user).get(path(scope, query, user));
  const change = (scope: Scope, query: string, body: unknown, user: TestUser = alice) =>
    app.as(user).post(path(scope, query, user), body);
  const changeRaw = (scope: Scope, query: string, rawBody: string, headers: Record<string, string> = {}) =>
    app.as(alice).request('POST', path(scope, query), { rawBody, headers });
  const expect400 = (response: ApiResponse, detail?: string | RegExp) => {
    expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: INVALID(detail) });
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  };
  const q = (params: Record<string, string>) => `?${new URLSearchParams(params)}`;

  describe('every scope', () => {
    const podcast = 'https://feeds.example.com/show.xml';
    const scopes: [Scope, string][] = [
      ['account', ''],
      ['device', q({ device: 'phone' })],
      ['podcast', q({ podcast })],
      ['episode', q({ podcast, episode: 'https://media.example.com/1.mp3?x=1&y=2' })],
    ];

    it.each(scopes)(
      '%s: {} before any change; POST answers the settings after it, and GET the same',
      async (scope, query) => {
        const empty = await read(scope, query);
        expect({ status: empty.status, body: empty.body }).toEqual({ status: 200, body: {} });
        expect(empty.headers.get('content-type')).toMatch(/^application\/json/);
        const set = await change(scope, query, {
          set: { a: 1, nested: { list: [true, null, 'x'] } },
          remove: [],
        });
        expect({ status: set.status, body: set.body }).toEqual({
          status: 200,
          body: { a: 1, nested: { list: [true, null, 'x'] } },
        });
        expect((await read(scope, query)).body).toEqual(set.body);
        const next = await change(scope, query, { set: { b: 'two' }, remove: ['a'] });
        expect(next.body).toEqual({ nested: { list: [true, null, 'x'] }, b: 'two' });
        expect((await read(scope, query)).body).toEqual(next.body);
      },
    );

    it('keeps each scope apart: the account, each device, each podcast and each episode of it', async () => {
      for (const [i, [scope, query]] of scopes.entries())
        expect((await change(scope, query, { set: { which: i } })).status).toBe(200);
      expect((await change('device', q({ device: 'Phone' }), { set: { which: 'Phone' } })).status).toBe(200);
      for (const [i, [scope, query]] of scopes.entries())
        expect((await read(scope, query)).body).toEqual({ which: i });
      expect((await read('device', q({ device: 'Phone' }))).body).toEqual({ which: 'Phone' });
      expect((await read('device', q({ device: 'tablet' }))).body).toEqual({});
      expect((await read('podcast', q({ podcast: `${podcast}#other` }))).body).toEqual({});
      expect(
        (await read('episode', q({ podcast, episode: 'https://media.example.com/2.mp3' }))).body,
      ).toEqual({});
      // Parameters a scope does not take are ignored.
      expect((await read('account', q({ device: 'phone', podcast }))).body).toEqual({ which: 0 });
      expect(
        (await read('podcast', q({ podcast, episode: 'https://media.example.com/1.mp3?x=1&y=2' }))).body,
      ).toEqual({
        which: 2,
      });
    });
  });

  describe('POST: set and remove', () => {
    it('sets values of every JSON kind, replaces those set again, and keeps the keys not named', async () => {
      const values = {
        s: 'text',
        n: -1.5,
        t: true,
        f: false,
        z: null,
        l: [1, [2]],
        o: { k: { deep: [] } },
        e: {},
      };
      expect((await change('account', '', { set: values })).body).toEqual(values);
      const after = await change('account', '', { set: { n: 2, added: 'new' } });
      expect(after.body).toEqual({ ...values, n: 2, added: 'new' });
    });

    it('sets, then removes: a key both set and removed in one request ends removed, as gpodder.net does', async () => {
      await change('account', '', { set: { kept: 1, both: 'old' } });
      const response = await change('account', '', {
        set: { both: 'new', fresh: 1 },
        remove: ['both', 'fresh'],
      });
      expect(response.body).toEqual({ kept: 1 });
    });

    it('takes a body with either list left out, or neither; removing a key not held changes nothing', async () => {
      expect((await change('account', '', { set: { a: 1 } })).body).toEqual({ a: 1 });
      expect((await change('account', '', { remove: ['missing'] })).body).toEqual({ a: 1 });
      expect((await change('account', '', {})).body).toEqual({ a: 1 });
      expect((await change('account', '', { remove: ['a'] })).body).toEqual({});
    });

    it('reads the body as JSON whatever the Content-Type says, as mygpoclient labels it form data', async () => {
      for (const [i, type] of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'application/octet-stream',
      ].entries()) {
        const response = await changeRaw('account', '', JSON.stringify({ set: { [type]: i } }), {
          'content-type': type,
        });
        expect([type, response.status]).toEqual([type, 200]);
      }
      expect(Object.keys((await read('account')).body)).toHaveLength(3);
    });

    it('keeps keys as sent: case, white space, digits and non-ASCII make other keys', async () => {
      const keys = { Key: 1, key: 2, ' key ': 3, '10': 4, 'clé 🔑': 5, constructor: 6, 'a.b': 7 };
      expect((await change('account', '', { set: keys })).body).toEqual(keys);
    });

    it("creates a device scope's device by its first use, by a change or a read, as an `other` without caption", async () => {
      await change('device', q({ device: 'phone' }), { set: { a: 1 } });
      await read('device', q({ device: 'tv' }));
      const devices = await app.as(alice).get(`/api/2/devices/${alice.name}.json`);
      expect(devices.body).toEqual([
        { id: 'phone', caption: '', type: 'other', subscriptions: 0 },
        { id: 'tv', caption: '', type: 'other', subscriptions: 0 },
      ]);
      // A device that exists keeps its caption and type.
      await app
        .as(alice)
        .post(`/api/2/devices/${alice.name}/phone.json`, { caption: 'Phone', type: 'mobile' });
      await change('device', q({ device: 'phone' }), { set: { b: 2 } });
      expect((await app.as(alice).get(`/api/2/devices/${alice.name}.json`)).body[0]).toEqual({
        id: 'phone',
        caption: 'Phone',
        type: 'mobile',
        subscriptions: 0,
      });
    });

    it('works with Basic credentials and with the session cookie, as gpodder.net clients send them', async () => {
      const login = await app.anonymous
        .withAuthorization(basicOf(alice))
        .post(`/api/2/auth/${alice.name}/login.json`, {});
      expect(login.status).toBe(200);
      const session = login.headers
        .getSetCookie()
        .find((line) => line.startsWith('sessionid='))!
        .split(';')[0]!;
      const byBasic = await app.anonymous
        .withAuthorization(basicOf(alice))
        .post(path('account'), { set: { a: 1 } });
      expect(byBasic.status).toBe(200);
      const byCookie = await app.anonymous.request('POST', path('account'), {
        body: { set: { b: 2 } },
        headers: { cookie: session },
      });
      expect({ status: byCookie.status, body: byCookie.body }).toEqual({ status: 200, body: { a: 1, b: 2 } });
      const again = await app.anonymous.get(path('account'), { cookie: session });
      expect(again.body).toEqual({ a: 1, b: 2 });
    });
  });

  describe('the scope parameters', () => {
    it.each([
      ['device', '', 'the device scope needs the device parameter'],
      ['podcast', '', 'the podcast scope needs the podcast parameter'],
      ['episode', q({ podcast: 'https://a.example/rss' }), 'the episode scope needs the episode parameter'],
      ['episode', q({ episode: 'https://a.example/1.mp3' }), 'the episode scope needs the podcast parameter'],
      ['device', '?device=my%20phone', 'device must be 1 to 64 of A-Z a-z 0-9 . _ -'],
      ['device', '?device=a&device=b', 'device must be given once'],
      ['podcast', '?podcast=', 'podcast must be 1 to 2048 characters'],
      [
        'podcast',
        q({ podcast: `https://a.example/${'x'.repeat(2048)}` }),
        'podcast must be 1 to 2048 characters',
      ],
    ] as [Scope, string, string][])(
      '%s%s: 400 "%s", on GET and on POST, changing nothing',
      async (scope, query, message) => {
        expect400(await read(scope, query), message);
        expect400(await change(scope, query, { set: { a: 1 } }), message);
      },
    );

    it('a missing device parameter creates no device', async () => {
      await change('device', '', { set: { a: 1 } });
      expect((await app.as(alice).get(`/api/2/devices/${alice.name}.json`)).body).toEqual([]);
    });

    it('an unknown scope is no route: 404', async () => {
      for (const response of [
        await app.as(alice).get(path('user')),
        await app.as(alice).post(path('accounts'), { set: {} }),
      ])
        expect({ status: response.status, body: response.body }).toEqual({
          status: 404,
          body: expect.objectContaining({ code: '404' }),
        });
    });
  });

  describe('bounds: 400 with the error body, nothing changed', () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

    it.each([
      ['a body that is not JSON', '{"set": {"a": 1}', 'the body is not JSON'],
      ['an empty body', '', 'the body is not JSON'],
      ['a JSON list', '[]', 'the body must be a JSON object'],
      ['set as a list', '{"set": [["a", 1]]}', 'set must be an object of settings'],
      ['remove as an object', '{"remove": {"a": true}}', 'remove must be a list of keys'],
      [
        'a removed key that is no string',
        '{"remove": [1]}',
        'setting keys must be strings of 1 to 255 characters',
      ],
      ['an empty key', '{"set": {"": 1}}', 'setting keys must be strings of 1 to 255 characters'],
      [
        'a key of 256 characters',
        JSON.stringify({ set: { ['k'.repeat(256)]: 1 } }),
        'setting keys must be strings of 1 to 255 characters',
      ],
      [
        'a value over 16 KiB of JSON',
        JSON.stringify({ set: { big: 'x'.repeat(16 * 1024) } }),
        'the value of "big" must be at most 16384 bytes of JSON',
      ],
      ['101 keys set', JSON.stringify({ set: keys(101) }), 'set must hold at most 100 keys'],
      [
        '101 keys removed',
        JSON.stringify({ remove: Object.keys(keys(101)) }),
        'remove must hold at most 100 keys',
      ],
      [
        'a value nested too deep',
        JSON.stringify({ set: { deep: JSON.parse(`${'['.repeat(40)}${']'.repeat(40)}`) } }),
        'the body must not nest deeper than 32 levels',
      ],
      ['a number beyond a double', '{"set": {"n": 1e400}}', /numbers must be finite/],
      ['a string with U+0000', '{"set": {"s": "a\\u0000b"}}', /U\+0000/],
      ['a key with a lone surrogate', '{"set": {"\\ud800": 1}}', /unpaired surrogates/],
      ['a __proto__ key', '{"set": {"__proto__": {"polluted": true}}}', /__proto__/],
    ])('refuses %s', async (_name, rawBody, message) => {
      await change('account', '', { set: { before: true } });
      expect400(await changeRaw('account', '', rawBody), message);
      expect((await read('account')).body).toEqual({ before: true });
    });

    it('takes a value of exactly 16 KiB of JSON and keys of 255 characters, non-ASCII counted as characters', async () => {
      const value = 'x'.repeat(16 * 1024 - 2);
      const key = 'é'.repeat(255);
      const response = await change('account', '', { set: { [key]: value } });
      expect(response.status).toBe(200);
      expect(response.body[key]).toBe(value);
    });

    it('holds at most 100 keys a scope: a change that would leave 101 is refused whole, one that removes as many is not', async () => {
      expect((await change('podcast', q({ podcast: 'p' }), { set: keys(100) })).status).toBe(200);
      expect400(
        await change('podcast', q({ podcast: 'p' }), { set: { new: 1, k5: 'five' } }),
        'a scope holds at most 100 settings; this change would leave 101',
      );
      expect((await read('podcast', q({ podcast: 'p' }))).body).toEqual(keys(100));
      const swap = await change('podcast', q({ podcast: 'p' }), { set: { new: 1 }, remove: ['k0'] });
      expect(Object.keys(swap.body)).toHaveLength(100);
      expect(swap.body.new).toBe(1);
      // Another scope has its own 100.
      expect((await change('account', '', { set: keys(100) })).status).toBe(200);
    });

    it('answers 413 for a body over the limit (1 MiB)', async () => {
      const response = await changeRaw(
        'account',
        '',
        JSON.stringify({ set: { a: 'x'.repeat(1024 * 1024) } }),
      );
      expect({ status: response.status, body: response.body }).toEqual({
        status: 413,
        body: errorBody(413, 'Request body too large'),
      });
    });
  });

  describe('users', () => {
    it("answers 401 with the Basic challenge for another user's path, whatever the credentials, changing nothing", async () => {
      const bob = await app.freshUser();
      await change('account', '', { set: { mine: true } });
      for (const authorization of [`Bearer ${bob.token}`, basicOf(bob)]) {
        const client = app.anonymous.withAuthorization(authorization);
        for (const response of [
          await client.get(path('account')),
          await client.post(path('account'), { set: { bob: true } }),
          await client.get(path('device', q({ device: 'phone' }))),
        ]) {
          expect({ status: response.status, body: response.body }).toEqual({
            status: 401,
            body: errorBody(401, 'User not authorized'),
          });
          expect(response.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
        }
      }
      expect((await app.anonymous.get(path('account'))).status).toBe(401);
      expect((await read('account')).body).toEqual({ mine: true });
      expect((await app.as(alice).get(`/api/2/devices/${alice.name}.json`)).body).toEqual([]);
    });

    it("keeps each user's settings their own, in every scope", async () => {
      const bob = await app.freshUser();
      await change('account', '', { set: { who: 'alice' } });
      await change('device', q({ device: 'phone' }), { set: { who: 'alice' } });
      expect((await read('account', '', bob)).body).toEqual({});
      expect((await read('device', q({ device: 'phone' }), bob)).body).toEqual({});
      await change('account', '', { set: { who: 'bob' } }, bob);
      expect((await read('account')).body).toEqual({ who: 'alice' });
      expect((await read('account', '', bob)).body).toEqual({ who: 'bob' });
    });
  });

  it('after settings changes, castlog replay --verify finds no difference and castlog history describes them', async () => {
    const user = await app.freshUser();
    const podcast = feed('settings');
    await change('account', '', { set: { public_subscriptions: false, n: 1.25 } }, user);
    await change('device', q({ device: 'laptop' }), { set: { a: { b: [1, 2] } }, remove: ['x'] }, user);
    await change('podcast', q({ podcast }), { set: { auto_flattr: true } }, user);
    await change('episode', q({ podcast, episode: `${podcast}#1` }), { set: { is_favorite: true } }, user);
    await change('account', '', { set: { n: 2 }, remove: ['public_subscriptions'] }, user);
    await change('account', '', { remove: ['missing'] }, user);
    const full = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
    const other = q({ podcast: `${podcast}?full` });
    expect((await change('podcast', other, { set: full }, user)).status).toBe(200);
    expect((await change('podcast', other, { set: { over: 1 } }, user)).status).toBe(400);

    await app.untilProjectionAtEnd();
    const env = childProjectorEnv(app);
    const replay = await runCli(['replay', '--verify', '--schema', uniqueName('settings_verify')], env);
    expect({ code: replay.code, stderr: replay.code === 0 ? '' : replay.stderr }).toEqual({
      code: 0,
      stderr: '',
    });

    const history = await runCli(['history', user.name, '--json'], env);
    expect(history.code).toBe(0);
    const entries: { type: string; request: string; result: string }[] = JSON.parse(history.stdout);
    const settings = entries.filter((entry) => entry.type === 'SettingsUpdateRequested');
    expect(settings.map(({ request, result }) => [request, result])).toEqual([
      [
        // Keys in the order the log keeps them (a jsonb column in the table log).
        expect.stringMatching(
          /^gpodder settings of account: set 2 \[(public_subscriptions, n|n, public_subscriptions)\]$/,
        ),
        'settings saved, the scope holds 2 keys',
      ],
      ['gpodder settings of device laptop: set 1 [a] remove 1 [x]', 'settings saved, the scope holds 1 key'],
      [
        expect.stringMatching(
          /^gpodder settings of podcast https:\/\/settings\.example\.com\/.*: set 1 \[auto_flattr\]$/,
        ),
        'settings saved, the scope holds 1 key',
      ],
      [
        expect.stringMatching(/^gpodder settings of episode https:.* of https:.*: set 1 \[is_favorite\]$/),
        'settings saved, the scope holds 1 key',
      ],
      [
        'gpodder settings of account: set 1 [n] remove 1 [public_subscriptions]',
        'settings saved, the scope holds 1 key',
      ],
      ['gpodder settings of account: remove 1 [missing]', 'settings saved, the scope holds 1 key'],
      [
        expect.stringMatching(/: set 100 \[k0, k1, k2, \+97 more\]$/),
        'settings saved, the scope holds 100 keys',
      ],
      [
        expect.stringMatching(/: set 1 \[over\]$/),
        'refused (400): a scope holds at most 100 settings; this change would leave 101',
      ],
    ]);
  });
});
