import { hashToken } from '@castlog/auth';
import { randomUUID } from 'node:crypto';
import { ApiClient, ApiResponse } from '../support/api-client';
import { errorBody, feed } from '../support/contract';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';
import { draftAnswerErrors, draftSchemaErrors } from '../support/sync-draft/draft-schema';

/** UTC with six fraction digits and Z: every time the sync face answers. */
const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** castlog's error body with the draft's 400. */
const INVALID = (detail?: string) =>
  expect.objectContaining({
    code: '400',
    message:
      detail === undefined
        ? expect.stringMatching(/^Input could not be validated/)
        : `Input could not be validated: ${detail}`,
  });

interface Entity {
  sync_id: string;
  guid: string;
  feed_url: string;
  subscribed_at: string;
  unsubscribed_at?: string;
}

interface ActionResult {
  type: string;
  action: string;
  action_id: string;
  status: 'applied' | 'ignored' | 'rejected';
  reason?: string;
  data: Record<string, unknown>;
}

interface SyncPage {
  results: { type: string; last_updated: string; data: Entity }[];
  has_more: boolean;
  has_next: boolean;
  next_since?: string;
  previous_since?: string;
}

interface SubscriptionsPage {
  results: Entity[];
  has_next: boolean;
  has_more: boolean;
  next?: string;
}

/** An RFC 3339 time `seconds` from now, with microseconds. */
const at = (seconds = 0) => new Date(Date.now() + seconds * 1000).toISOString().replace('Z', '123Z');

const subscribe = (feedUrl: string, occurredAt = at(), extra: Record<string, unknown> = {}) => ({
  type: 'subscription',
  action: 'subscribe',
  action_id: randomUUID(),
  occurred_at: occurredAt,
  data: { feed_url: feedUrl, ...extra },
});

const unsubscribe = (syncId: string, occurredAt = at()) => ({
  type: 'subscription',
  action: 'unsubscribe',
  action_id: randomUUID(),
  occurred_at: occurredAt,
  data: { sync_id: syncId },
});

/** Each result matches the draft's schema: one with an entity `SubscriptionActionResult`, one that
 * reached none (rejected) `SyncActionResult`. */
const expectDraftResults = (results: readonly ActionResult[]) => {
  for (const result of results) {
    const schema =
      typeof result.data.sync_id === 'string' && 'subscribed_at' in result.data
        ? 'SubscriptionActionResult'
        : 'SyncActionResult';
    expect([schema, draftSchemaErrors(schema, result)]).toEqual([schema, undefined]);
  }
};

const expectEntity = (entity: unknown) =>
  expect(draftSchemaErrors('PersistedSubscription', entity)).toBeUndefined();

describe('the Open Podcast API sync draft: /auth, /api/v1', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  let clientId: string;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());
  beforeEach(async () => {
    alice = await app.freshUser();
    clientId = randomUUID();
  });

  /** alice's client on the sync face: her token and a Client-ID of its own. */
  const client = (id = clientId, user = alice): { api: ApiClient; headers: Record<string, string> } => ({
    api: app.as(user),
    headers: { 'client-id': id },
  });
  const post = async (requests: unknown[], id = clientId, user = alice) => {
    const { api, headers } = client(id, user);
    return api.post<{ results: ActionResult[] }>('/api/v1/sync', { requests }, headers);
  };
  const get = <T>(path: string, id = clientId, user = alice): Promise<ApiResponse<T>> => {
    const { api, headers } = client(id, user);
    return api.get<T>(path, headers);
  };
  /** Subscribes to each feed, one action each, and answers the entities in that order. */
  const subscribed = async (...feeds: string[]): Promise<Entity[]> => {
    const response = await post(feeds.map((url) => subscribe(url)));
    expect(response.status).toBe(200);
    return response.body.results.map((result) => result.data as unknown as Entity);
  };
  const expect400 = (response: ApiResponse, detail?: string) => {
    expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: INVALID(detail) });
  };

  describe('POST /auth/login and /auth/refresh', () => {
    const login = () => app.anonymous.post('/auth/login', { username: alice.name, password: alice.password });

    it('logs in: an access token, its lifetime, a refresh token, when it expires and where to refresh', async () => {
      const before = Date.now();
      const response = await login();
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.body).toEqual({
        access_token: expect.stringMatching(/^cl_/),
        expires_in: app.config.ACCESS_TOKEN_TTL / 1000,
        refresh_token: expect.stringMatching(/^cl_/),
        refresh_expires: expect.stringMatching(ISO_MICROS),
        refresh_endpoint: '/auth/refresh',
      });
      expect(draftSchemaErrors('LoginResponse', response.body)).toBeUndefined();
      const expires = Date.parse(response.body.refresh_expires);
      expect(expires).toBeGreaterThanOrEqual(before + app.config.REFRESH_TOKEN_TTL - 1);
      expect(expires).toBeLessThanOrEqual(Date.now() + app.config.REFRESH_TOKEN_TTL);
    });

    it('gives tokens that work on every face', async () => {
      const { access_token: token } = (await login()).body;
      const bearer = app.anonymous.withAuthorization(`Bearer ${token}`);
      expect((await bearer.get('/api/v1/subscriptions', { 'client-id': clientId })).status).toBe(200);
      expect((await bearer.get('/v1/subscriptions')).status).toBe(200);
      expect((await bearer.get(`/api/2/devices/${alice.name}.json`)).status).toBe(200);
      const v1 = await app.anonymous.post('/v1/auth/login', {
        username: alice.name,
        password: alice.password,
      });
      const v1Bearer = app.anonymous.withAuthorization(`Bearer ${v1.body.access_token}`);
      expect((await v1Bearer.get('/api/v1/subscriptions', { 'client-id': clientId })).status).toBe(200);
    });

    it('refreshes without using the refresh token up: each refresh gives a new access token', async () => {
      const { refresh_token: refreshToken } = (await login()).body;
      const first = await app.anonymous.post('/auth/refresh', { refresh_token: refreshToken });
      const second = await app.anonymous.post('/auth/refresh', { refresh_token: refreshToken });
      for (const response of [first, second]) {
        expect(response.status).toBe(200);
        expect(response.headers.get('cache-control')).toBe('no-store');
        expect(response.body).toEqual({
          access_token: expect.stringMatching(/^cl_/),
          expires_in: app.config.ACCESS_TOKEN_TTL / 1000,
        });
        expect(draftSchemaErrors('AccessTokenResponse', response.body)).toBeUndefined();
        const bearer = app.anonymous.withAuthorization(`Bearer ${response.body.access_token}`);
        expect((await bearer.get('/api/v1/subscriptions', { 'client-id': clientId })).status).toBe(200);
      }
      expect(second.body.access_token).not.toBe(first.body.access_token);
      // A refresh token is not an access token.
      const refreshAsBearer = app.anonymous.withAuthorization(`Bearer ${refreshToken}`);
      expect((await refreshAsBearer.get('/api/v1/subscriptions', { 'client-id': clientId })).status).toBe(
        401,
      );
    });

    it('answers 401 for a revoked, expired, unknown or wrong-kind refresh token, and a wrong password', async () => {
      const [revoked, expired] = [(await login()).body, (await login()).body];
      await app.users.revokeToken(revoked.refresh_token);
      await app.runtime.database.dataSource.query(
        `UPDATE castlog_auth.tokens SET expires_at = now() WHERE token_hash = $1`,
        [hashToken(expired.refresh_token)],
      );
      for (const refreshToken of [
        revoked.refresh_token,
        expired.refresh_token,
        revoked.access_token,
        'cl_x',
        '',
      ]) {
        const response = await app.anonymous.post('/auth/refresh', { refresh_token: refreshToken });
        expect([refreshToken, response.status, response.body]).toEqual([
          refreshToken,
          401,
          errorBody(401, 'User not authorized'),
        ]);
      }
      const wrong = await app.anonymous.post('/auth/login', { username: alice.name, password: 'wrong' });
      expect({ status: wrong.status, body: wrong.body }).toEqual({
        status: 401,
        body: errorBody(401, 'User not authorized'),
      });
      expect(wrong.headers.get('www-authenticate')).toMatch(/Bearer/);
    });

    it('answers 400, never 405, for a body of another shape', async () => {
      expect400(
        await app.anonymous.post('/auth/login', { username: alice.name }),
        'password must be a string',
      );
      expect400(await app.anonymous.post('/auth/login', []), 'the body must be a JSON object');
      expect400(await app.anonymous.request('POST', '/auth/login', { rawBody: '{"username":' }));
      expect400(await app.anonymous.request('POST', '/auth/login'));
      expect400(await app.anonymous.post('/auth/refresh', { token: 'x' }), 'refresh_token must be a string');
      expect400(
        await app.anonymous.request('POST', '/auth/refresh', {
          rawBody: 'refresh_token=x',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
      );
    });
  });

  describe('the Client-ID header', () => {
    const routes = (syncId: string): [string, string][] => [
      ['POST', '/api/v1/sync'],
      ['GET', '/api/v1/sync'],
      ['GET', '/api/v1/subscriptions'],
      ['GET', `/api/v1/subscriptions/${syncId}`],
    ];
    const send = (method: string, path: string, headers: Record<string, string>, api = app.as(alice)) =>
      api.request(
        method,
        path,
        method === 'POST' ? { body: { requests: [subscribe(feed())] }, headers } : { headers },
      );

    it('is required on every /api/v1 route: missing, another version or not a UUID is 400', async () => {
      const [entity] = await subscribed(feed());
      for (const [method, path] of routes(entity!.sync_id))
        for (const headers of [
          {} as Record<string, string>,
          { 'client-id': 'a0eebc99-9c0b-11d1-b1d2-0800200c9a66' },
          { 'client-id': 'phone' },
        ])
          expect400(await send(method, path, headers), 'the Client-ID header must be a UUID version 4');
    });

    it('is a UUID version 4 in any case, and comes after the credentials (401 first)', async () => {
      const [entity] = await subscribed(feed());
      for (const [method, path] of routes(entity!.sync_id)) {
        expect((await send(method, path, { 'client-id': clientId.toUpperCase() })).status).toBe(200);
        const anonymous = await send(method, path, {}, app.anonymous);
        expect({ status: anonymous.status, body: anonymous.body }).toEqual({
          status: 401,
          body: errorBody(401, 'User not authorized'),
        });
      }
    });

    it('is not asked for on /auth', async () => {
      expect(
        (await app.anonymous.post('/auth/login', { username: alice.name, password: alice.password })).status,
      ).toBe(200);
    });
  });

  describe('POST /api/v1/sync', () => {
    it('applies up to 30 actions, one result each in request order, and refuses 31 or none', async () => {
      const feeds = Array.from({ length: 30 }, () => feed('thirty'));
      const thirty = await post(feeds.map((url) => subscribe(url)));
      expect(thirty.status).toBe(200);
      expect(thirty.body.results.map((result) => [result.status, result.data.feed_url])).toEqual(
        feeds.map((url) => ['applied', url]),
      );
      expectDraftResults(thirty.body.results);
      expect400(
        await post(Array.from({ length: 31 }, () => subscribe(feed()))),
        'requests must hold at most 30 actions',
      );
      expect400(await post([]), 'requests must not be empty');
      const listed = await get<SubscriptionsPage>('/api/v1/subscriptions?limit=1000');
      expect(listed.body.results).toHaveLength(30);
    });

    it('answers 400 for a body that is not {"requests": [...]}, and appends nothing', async () => {
      const api = app.as(alice);
      const headers = { 'client-id': clientId };
      expect400(
        await api.post('/api/v1/sync', [subscribe(feed())], headers),
        'the body must be a JSON object',
      );
      expect400(
        await api.post('/api/v1/sync', { requests: subscribe(feed()) }, headers),
        'requests must be an array',
      );
      expect400(await api.post('/api/v1/sync', {}, headers), 'requests must be an array');
      expect400(await api.request('POST', '/api/v1/sync', { rawBody: '{"requests":[', headers }));
      expect((await get<SubscriptionsPage>('/api/v1/subscriptions')).body.results).toEqual([]);
    });

    it('judges each action alone: rejected ones answer a reason and their data, the others apply', async () => {
      const [a, b] = [feed('a'), feed('b')];
      const unknownSyncId = randomUUID();
      const requests = [
        subscribe(a, '2024-01-10T10:00:00.1234567+01:00'),
        unsubscribe(unknownSyncId),
        subscribe('feed.example.com/rss'),
        { ...subscribe(feed()), type: 'susbcription' },
        subscribe(b),
        subscribe(feed(), '2024-01-10T10:00:00'),
        subscribe(a, at()),
      ];
      const response = await post(requests);
      expect(response.status).toBe(200);
      const [first, notFound, noProtocol, unknownType, second, noOffset, again] = response.body.results;
      const echo = (index: number) => {
        const { type, action, action_id: actionId } = requests[index]!;
        return { type, action, action_id: actionId };
      };
      expect(first).toEqual({
        ...echo(0),
        status: 'applied',
        data: {
          sync_id: expect.any(String),
          guid: expect.any(String),
          feed_url: a,
          subscribed_at: '2024-01-10T09:00:00.123456Z',
        },
      });
      expect(notFound).toEqual({
        ...echo(1),
        status: 'rejected',
        reason: 'Entity not found',
        data: { sync_id: unknownSyncId },
      });
      expect(noProtocol).toEqual({
        ...echo(2),
        status: 'rejected',
        reason: 'No protocol present',
        data: { feed_url: 'feed.example.com/rss' },
      });
      expect(unknownType).toEqual({
        ...echo(3),
        status: 'rejected',
        reason: 'Unknown type',
        data: requests[3]!.data,
      });
      expect(second).toMatchObject({ ...echo(4), status: 'applied', data: { feed_url: b } });
      expect(noOffset).toMatchObject({
        ...echo(5),
        status: 'rejected',
        reason: expect.stringMatching(/^occurred_at/),
      });
      // Subscribed already: ignored, with the entity as it is.
      expect(again).toEqual({ ...echo(6), status: 'ignored', data: first!.data });
      expectDraftResults(response.body.results);
      // Read your writes, on this face and on /v1.
      const listed = await get<SubscriptionsPage>('/api/v1/subscriptions');
      expect(listed.body.results.map((entity) => entity.feed_url).sort()).toEqual([a, b].sort());
      const v1 = await app.as(alice).get('/v1/subscriptions');
      expect(v1.body.subscriptions.map((item: { feed_url: string }) => item.feed_url).sort()).toEqual(
        [a, b].sort(),
      );
    });

    it('answers a retried action_id with its first status and the entity as it is now', async () => {
      const action = subscribe(feed(), at(-60));
      const [entity] = (await post([action])).body.results;
      const unsubscribed = await post([unsubscribe(String(entity!.data.sync_id))]);
      expect(unsubscribed.body.results[0]).toMatchObject({
        status: 'applied',
        data: { unsubscribed_at: expect.stringMatching(ISO_MICROS) },
      });
      const retried = await post([action]);
      expect(retried.body.results).toEqual([{ ...entity, data: unsubscribed.body.results[0]!.data }]);
      expectDraftResults(retried.body.results);
    });
  });

  describe('GET /api/v1/sync', () => {
    const otherClient: string = randomUUID();
    const page = (query: string, id = otherClient) => get<SyncPage>(`/api/v1/sync${query}`, id);
    /** A link's path and query, for the client to follow. */
    const follow = (link: string | undefined, id = otherClient) => {
      expect(link).toMatch(new RegExp(`^${app.url}/api/v1/sync`));
      const url = new URL(link!);
      return page(url.search, id);
    };
    const feedsOf = (body: SyncPage) => body.results.map((result) => result.data.feed_url);

    it('lists the entities changed since a cursor, oldest change first, in pages linked both ways', async () => {
      const feeds = [feed('s1'), feed('s2'), feed('s3')];
      for (const url of feeds) await subscribed(url);
      const first = await page('?limit=2&include=subscriptions&x=kept');
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        results: [expect.anything(), expect.anything()],
        has_more: true,
        has_next: true,
        next_since: expect.stringMatching(/\?limit=2&include=subscriptions&x=kept&since=[^&]+$/),
      });
      expect(feedsOf(first.body)).toEqual(feeds.slice(0, 2));
      for (const result of first.body.results) {
        expect(result).toEqual({
          type: 'subscription',
          last_updated: expect.stringMatching(ISO_MICROS),
          data: expect.anything(),
        });
        expectEntity(result.data);
      }
      const second = await follow(first.body.next_since);
      expect(feedsOf(second.body)).toEqual(feeds.slice(2));
      expect(second.body).toMatchObject({ has_more: false, has_next: false });
      // The page before the second is the first, which starts at the beginning: no since.
      expect(second.body.previous_since).toBe(`${app.url}/api/v1/sync?limit=2&include=subscriptions&x=kept`);
      const third = await follow(second.body.next_since);
      expect(third.body).toEqual({
        results: [],
        has_more: false,
        has_next: false,
        previous_since: expect.any(String),
      });
      expect(feedsOf((await follow(third.body.previous_since)).body)).toEqual(feeds.slice(1));
      // A change moves an entity after the others; the last page's next_since then finds it.
      const [changed] = (await post([unsubscribe(first.body.results[0]!.data.sync_id)])).body.results;
      const later = await follow(second.body.next_since);
      expect(later.body.results.map((result) => result.data)).toEqual([changed!.data]);
    });

    it('leaves out the entities the requesting client changed last, unless include_own=true', async () => {
      const [mine] = await subscribed(feed('mine'));
      const [theirs] = await post([subscribe(feed('theirs'))], otherClient).then((r) =>
        r.body.results.map((x) => x.data),
      );
      const syncIds = (response: ApiResponse<SyncPage>) =>
        response.body.results.map((result) => result.data.sync_id);
      expect(syncIds(await page('', clientId))).toEqual([theirs!.sync_id]);
      expect(syncIds(await page('?include_own=false', clientId.toUpperCase()))).toEqual([theirs!.sync_id]);
      expect(syncIds(await page('?include_own=true', clientId))).toEqual([mine!.sync_id, theirs!.sync_id]);
      expect(syncIds(await page('', otherClient))).toEqual([mine!.sync_id]);
    });

    it('answers last_updated as the occurred_at of the last change, and since as exclusive', async () => {
      const [entity] = (await post([subscribe(feed(), '2024-03-01T12:00:00.000001Z')])).body.results;
      const all = await page('?limit=1');
      expect(all.body.results).toEqual([
        { type: 'subscription', last_updated: '2024-03-01T12:00:00.000001Z', data: entity!.data },
      ]);
      const since = new URL(all.body.next_since!).searchParams.get('since')!;
      expect(since).toMatch(ISO_MICROS);
      expect((await page(`?since=${encodeURIComponent(since)}`)).body.results).toEqual([]);
      expect(
        (await page(`?since=${encodeURIComponent('2000-01-01T00:00:00+02:00')}`)).body.results,
      ).toHaveLength(1);
    });

    it('answers 400 for a query it cannot read', async () => {
      for (const [query, detail] of [
        ['?since=yesterday', 'since must be an RFC 3339 date-time with an offset'],
        ['?since=2026-01-01T00:00:00', 'since must be an RFC 3339 date-time with an offset'],
        ['?limit=0', 'limit must be an integer from 1 to 1000'],
        ['?limit=1001', 'limit must be an integer from 1 to 1000'],
        ['?include=episodes', 'include must be all or subscriptions (comma-separated)'],
        ['?include_own=yes', 'include_own must be true or false'],
      ])
        expect400(await page(query!), detail);
      expect((await page('?include=all,subscriptions&limit=1000')).status).toBe(200);
    });
  });

  describe('GET /api/v1/subscriptions', () => {
    it('pages through the subscribed entities in sync_id order, with next while more follow', async () => {
      const entities = await subscribed(...Array.from({ length: 5 }, () => feed('page')));
      const seen: Entity[] = [];
      let response = await get<SubscriptionsPage>('/api/v1/subscriptions?limit=2');
      for (const expected of [2, 2, 1]) {
        expect(response.status).toBe(200);
        expect(draftAnswerErrors('GET', '/api/v1/subscriptions', 200, response.body)).toBeUndefined();
        expect(response.body.results).toHaveLength(expected);
        expect(response.body.has_next).toBe(expected === 2);
        expect(response.body.has_more).toBe(expected === 2);
        seen.push(...response.body.results);
        if (response.body.next === undefined) break;
        expect(response.body.next).toMatch(new RegExp(`^${app.url}/api/v1/subscriptions\\?limit=2&since=`));
        response = await get<SubscriptionsPage>(
          new URL(response.body.next).pathname + new URL(response.body.next).search,
        );
      }
      expect(response.body.next).toBeUndefined();
      const bySyncId = (x: Entity, y: Entity) => (x.sync_id < y.sync_id ? -1 : 1);
      expect(seen).toEqual([...entities].sort(bySyncId));
    });

    it('lists unsubscribed ones only with include_unsubscribed=true', async () => {
      const [kept, dropped] = await subscribed(feed('kept'), feed('dropped'));
      const [unsubscribed] = (await post([unsubscribe(dropped!.sync_id)])).body.results;
      expect((await get<SubscriptionsPage>('/api/v1/subscriptions')).body.results).toEqual([kept]);
      const all = await get<SubscriptionsPage>('/api/v1/subscriptions?include_unsubscribed=true');
      expect(all.body.results).toEqual(expect.arrayContaining([kept, unsubscribed!.data]));
      expect(all.body.results).toHaveLength(2);
      expect(draftAnswerErrors('GET', '/api/v1/subscriptions', 200, all.body)).toBeUndefined();
    });

    it('answers 400 for a query it cannot read', async () => {
      expect400(await get('/api/v1/subscriptions?limit=1001'), 'limit must be an integer from 1 to 1000');
      expect400(await get('/api/v1/subscriptions?since=3'), 'since must be the value a next link carries');
      expect400(
        await get('/api/v1/subscriptions?include_unsubscribed=1'),
        'include_unsubscribed must be true or false',
      );
    });
  });

  describe('GET /api/v1/subscriptions/{sync_id}', () => {
    it('answers the entity, subscribed or not', async () => {
      const [entity] = await subscribed(feed());
      const one = await get<Entity>(`/api/v1/subscriptions/${entity!.sync_id.toUpperCase()}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(entity);
      expectEntity(one.body);
      const [unsubscribed] = (await post([unsubscribe(entity!.sync_id)])).body.results;
      const after = await get<Entity>(`/api/v1/subscriptions/${entity!.sync_id}`);
      expect(after.body).toEqual(unsubscribed!.data);
      expect(after.body.unsubscribed_at).toMatch(ISO_MICROS);
      expectEntity(after.body);
    });

    it("answers 404 for an unknown sync_id and another user's, 400 for one that is not a UUID", async () => {
      const bob = await app.freshUser();
      const [bobs] = await subscribed(feed());
      for (const syncId of [randomUUID(), bobs!.sync_id]) {
        const response = await get(`/api/v1/subscriptions/${syncId}`, clientId, bob);
        expect({ status: response.status, body: response.body }).toEqual({
          status: 404,
          body: errorBody(404, 'Resource not found'),
        });
      }
      expect400(await get('/api/v1/subscriptions/feed1'), 'sync_id must be a UUID');
    });
  });

  it('answers 404, never 405, for a route or method the face does not have', async () => {
    for (const [method, path] of [
      ['PUT', '/api/v1/sync'],
      ['DELETE', '/api/v1/subscriptions'],
      ['GET', '/api/v1/episodes'],
      ['GET', '/auth/login'],
    ]) {
      const response = await client().api.request(method!, path!, { headers: client().headers });
      expect([method, path, response.status, response.body]).toEqual([
        method,
        path,
        404,
        errorBody(404, 'Resource not found'),
      ]);
    }
  });

  it('describes its six routes in /openapi.json', async () => {
    const document = (await (await fetch(new URL('/openapi.json', app.url))).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'POST /auth/login',
        'POST /auth/refresh',
        'POST /api/v1/sync',
        'GET /api/v1/sync',
        'GET /api/v1/subscriptions',
        'GET /api/v1/subscriptions/{sync_id}',
      ]),
    );
  });
});
