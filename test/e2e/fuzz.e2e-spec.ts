import { verifyReplay } from '@castlog/replay';
import * as fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { sendAndCheck, sendRaw, TIMEOUT_MS } from '../fuzz/client';
import {
  authPlans,
  carolPlans,
  gpodderPlans,
  gpodderPlansFor,
  materialize,
  Plan,
  rawRequest,
  readPlans,
  unknownPlans,
  World,
  writePlans,
} from '../fuzz/generators';
import { CarolModel } from '../fuzz/gpodder-model';
import { isSyncDraft, syncDraftPlans } from '../fuzz/sync-draft';
import { allowedStatuses, allowedWhenLimited, checkAnswer, isGpodder, learn } from '../fuzz/oracle';
import { checkAgainstOpenApi, RecordedResponse } from '../support/openapi-check';
import { uniqueName } from '../support/databases';
import { CastlogUnderTest, EventLogKind, startCastlog, TestUser } from '../support/start-castlog';

/**
 * Property-based HTTP fuzzing of every route (fast-check), the gpodder.net face's included. Each
 * run sends one request built from random and malformed parts — bodies (any JSON, wrong types for
 * every field, deep nesting, huge strings, random bytes, truncated JSON, bodies over the limit),
 * paths (random, percent-encoded, very long segments), query strings (random values, repeated
 * keys, unicode) and headers (Authorization variants, content types, X-Request-Id garbage) — and
 * checks the answer:
 *
 * - an answer within 10 s, never a 5xx;
 * - every non-2xx answer is JSON `{"code": "<status>", "message": "<the contract's message>[: detail]"}`
 *   and nothing else; 401 carries WWW-Authenticate, 429 Retry-After;
 * - no stack trace or source path in any body; the answer's X-Request-Id is sane;
 * - the status is one the route can answer for that input (valid credentials never get 401, a user
 *   with no data never sees any, a structurally valid POST with valid credentials is a 200);
 * - answers of documented routes match the served /openapi.json.
 *
 * The gpodder.net face (/api/2/… and the simple API) gets the same, with its own rules: 400 for
 * input that fails validation (device ids outside the pattern, a `since` that is not a
 * non-negative integer, bodies of the wrong shape, one URL added and removed, settings out of
 * bounds or a scope without its parameters), 401 for a path naming another user, bodies read
 * whatever their Content-Type, gpodder.net's empty 200s, and 2xx bodies the apps can parse (integer
 * timestamps, lists of URLs, update_urls pairs, actions in gpodder's format, a scope's settings with
 * what a change set and without what it removed). Carol is written only through that face, with uploads and simple-API PUTs in
 * several spellings of a few feeds: after every request a client that downloads with the
 * timestamp it got last holds exactly the subscription list a model of the contract's rules says
 * (test/fuzz/gpodder-model.ts), and at the end the download, the simple API and /v1 all list it.
 *
 * Raw HTTP/1.1 bytes over a socket cover what fetch refuses to send (control bytes in headers,
 * broken framing, odd request lines). Everything runs against the Kafka and the PostgreSQL log, with
 * the rate limit off; a last property fuzzes with every rate-limit bucket empty (429 unless refused
 * earlier).
 *
 * The sync draft's face (/api/v1 and its /auth routes) gets the same, with its own rules
 * (test/fuzz/sync-draft.ts): 400 for input that fails validation (never 405), bodies of 0 to 31
 * actions with wrong types everywhere, huge strings, odd timestamps, bad Client-IDs and queries;
 * each result echoing its action, a time the contract refuses rejected.
 *
 * After the runs, the read model must equal a replay of the log (`verifyReplay`), and every
 * subscription of the fuzzed user must be reachable through GET, the list total being the row
 * count, and listed once on the sync face, alike in its list, its single route and a full sync.
 *
 * The seed is logged; replay a run with CASTLOG_FUZZ_SEED (and CASTLOG_FUZZ_PATH from a failure's
 * report). CASTLOG_FUZZ_RUNS scales the number of runs (default 1: about 2,500 requests).
 *
 * What is sent comes from test/fuzz/generators.ts, what an answer may be from test/fuzz/oracle.ts,
 * and test/fuzz/client.ts sends and checks.
 */

const SCALE = Number(process.env.CASTLOG_FUZZ_RUNS ?? 1);
/** One seed for the whole file, logged, so any run can be replayed (fast-check also prints the seed
 * and path of a failure). */
const SEED = Number(process.env.CASTLOG_FUZZ_SEED ?? Date.now() % 2 ** 31);
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
const params = <T>(numRuns: number): fc.Parameters<T> => ({
  numRuns: runs(numRuns),
  seed: SEED,
  ...(process.env.CASTLOG_FUZZ_PATH ? { path: process.env.CASTLOG_FUZZ_PATH } : {}),
  // Shrinking re-sends requests: stop in time for fast-check, not jest, to report the failure and
  // its seed.
  interruptAfterTimeLimit: 200_000,
  markInterruptAsFailure: true,
});

/** The sync draft's part of a world before any request: nothing learned yet. */
const emptySyncWorld = () => ({
  syncIds: [] as string[],
  actionIds: [] as string[],
  syncCursors: [] as string[],
  listCursors: [] as string[],
  draftRefreshToken: '',
});

const basicOf = (user: TestUser) =>
  `Basic ${Buffer.from(`${user.name}:${user.password}`, 'utf8').toString('base64')}`;

/** A gpodder.net session of the user, from login.json. */
async function gpodderSession(app: CastlogUnderTest, user: TestUser): Promise<string> {
  const response = await fetch(new URL(`/api/2/auth/${user.name}/login.json`, app.url), {
    method: 'POST',
    headers: { authorization: basicOf(user) },
  });
  expect(response.status).toBe(200);
  const session = response.headers
    .getSetCookie()
    .map((cookie) => /^sessionid=([^;]+)/.exec(cookie)?.[1])
    .find((value) => value !== undefined);
  if (session === undefined) throw new Error('login.json set no session cookie');
  return session;
}

/** Carol's subscription download on a device of its own, since an instant (with her token: a
 * password check per request would take most of the run's time). */
const carolDownload =
  (app: CastlogUnderTest, world: World) =>
  async (since: number): Promise<{ add: string[]; remove: string[]; timestamp: number }> => {
    const response = await fetch(
      new URL(`/api/2/subscriptions/${world.carol.name}/checker.json?since=${since}`, app.url),
      {
        headers: { authorization: `Bearer ${world.carol.token}` },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      },
    );
    const text = await response.text();
    if (response.status !== 200)
      throw new Error(`Carol's download since ${since}: ${response.status} ${text}`);
    return JSON.parse(text);
  };

// ---------------------------------------------------------------------------------------------

beforeAll(() => console.log(`fuzz seed ${SEED} (replay with CASTLOG_FUZZ_SEED=${SEED})`));

describe.each<EventLogKind>(['kafka', 'postgres'])('HTTP fuzzing (%s log)', (log) => {
  let app: CastlogUnderTest;
  let world: World;
  const recorded: RecordedResponse[] = [];
  const counts = new Map<string, number>();
  let requests = 0;

  const model = new CarolModel();

  beforeAll(async () => {
    // A stuck projection shows as a 503 within the per-request timeout, not as a hang.
    app = await startCastlog({ log, env: { READ_YOUR_WRITES_TIMEOUT: '8s' } });
    const [alice, bob, carol] = [await app.freshUser(), await app.freshUser(), await app.freshUser()];
    const seeded = await app.as(alice).post('/v1/subscriptions', {
      subscriptions: Array.from({ length: 6 }, (_, i) => ({
        feed_url: `https://seed${i}.example.com/rss`,
        guid: randomUUID(),
      })),
    });
    expect(seeded.status).toBe(200);
    const login = await app.anonymous.post('/v1/auth/login', {
      username: alice.name,
      password: alice.password,
    });
    expect(login.status).toBe(200);
    const draftLogin = await app.anonymous.post('/auth/login', {
      username: alice.name,
      password: alice.password,
    });
    expect(draftLogin.status).toBe(200);
    world = {
      alice,
      bob,
      carol,
      refreshToken: login.body.refresh_token,
      knownGuids: seeded.body.success.map((item: { guid: string }) => item.guid),
      deletionIds: [],
      aliceSession: await gpodderSession(app, alice),
      ...emptySyncWorld(),
      draftRefreshToken: draftLogin.body.refresh_token,
    };
  });

  afterAll(async () => {
    const summary = [...counts].sort().map(([key, n]) => `${key}: ${n}`);
    console.log(`fuzz (${log} log): ${requests} requests\n${summary.join('\n')}`);
    await app?.close();
  });

  /** Sends one plan, checks every property, learns from the answer. */
  const exercise = async (plan: Plan) => {
    const sent = await sendAndCheck(app.url, world, plan, allowedStatuses);
    if (!sent) return;
    const { answer, target, where, refusedUnread } = sent;
    requests += 1;
    const key = `${plan.route} ${plan.method} ${answer.status}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    learn(plan, answer, world, where);
    // A head Node's parser refuses, or a path the router places on no route (a 404 to a segment
    // it cannot read), never reaches a gpodder.net or sync draft route: that answer is not the
    // route's.
    const answeredByRoute =
      !(isGpodder(plan.route) || isSyncDraft(plan.route)) ||
      !(refusedUnread || (!plan.clean && answer.status === 404));
    if (plan.method !== 'HEAD' && answer.status !== 413 && answeredByRoute)
      recorded.push({ method: plan.method, path: target, status: answer.status, body: answer.json });
  };

  it('writes: POST /v1/subscriptions, PATCH and DELETE /v1/subscriptions/{guid}', async () => {
    await fc.assert(fc.asyncProperty(writePlans, exercise), params(300));
  }, 240_000);

  it('reads: GET (and HEAD) /v1/subscriptions, /v1/subscriptions/{guid}, /v1/deletions/{id}', async () => {
    await fc.assert(fc.asyncProperty(readPlans, exercise), params(300));
  }, 240_000);

  it('tokens: POST /v1/auth/login and /v1/auth/refresh', async () => {
    await fc.assert(fc.asyncProperty(authPlans, exercise), params(80));
  }, 240_000);

  it('the sync draft: POST and GET /api/v1/sync, GET /api/v1/subscriptions[/{sync_id}], /auth/login and /auth/refresh', async () => {
    await fc.assert(fc.asyncProperty(syncDraftPlans, exercise), params(300));
  }, 240_000);

  it('unknown routes and methods', async () => {
    await fc.assert(fc.asyncProperty(unknownPlans, exercise), params(150));
  }, 240_000);

  it('the gpodder.net face: /api/2/auth, devices, subscriptions, sync-devices, episodes, settings, and the simple API', async () => {
    await fc.assert(fc.asyncProperty(gpodderPlans, exercise), params(200));
  }, 240_000);

  it("gpodder.net uploads and simple-API PUTs: a client syncing with since always holds the model's list", async () => {
    const download = carolDownload(app, world);
    await model.sync(download);
    await fc.assert(
      fc.asyncProperty(carolPlans, async (plan) => {
        const sent = await sendAndCheck(app.url, world, plan, allowedStatuses);
        if (!sent) return;
        requests += 2;
        const key = `carol ${plan.route} ${sent.answer.status}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
        learn(plan, sent.answer, world, sent.where);
        model.apply(plan, sent.answer, world, sent.where);
        await model.sync(download);
      }),
      params(50),
    );
  }, 240_000);

  it('raw HTTP/1.1 requests a fetch client would refuse', async () => {
    const port = Number(new URL(app.url).port);
    await fc.assert(
      fc.asyncProperty(rawRequest, async ({ label, bytes }) => {
        const answer = await sendRaw(
          port,
          Buffer.from(materialize(bytes.toString('latin1'), world), 'latin1'),
        );
        requests += 1;
        const json = (() => {
          try {
            return { json: JSON.parse(answer.text) as unknown, isJson: true };
          } catch {
            return { json: undefined, isJson: false };
          }
        })();
        checkAnswer(`raw ${label}`, 'GET', {
          status: answer.status,
          text: answer.text,
          ...json,
          header: (name) => answer.headers.get(name) ?? null,
        });
      }),
      params(100),
    );
  }, 240_000);

  it('leaves a read model equal to a replay of the log, every subscription reachable', async () => {
    const { dataSource, schema } = app.runtime.database;
    await app.until('every deletion finalized and logged', async () => {
      const [row] = await dataSource.query(
        `SELECT (SELECT count(*) FROM "${schema}".deletions WHERE status = 'PENDING')::int
              + (SELECT count(*) FROM "${schema}".deletion_saga WHERE NOT logged)::int AS open`,
      );
      return row.open === 0;
    });
    const differences = await verifyReplay({
      dataSource,
      eventLog: app.runtime.eventLog,
      schema: uniqueName('scratch'),
      liveSchema: schema,
    });
    expect(differences.map((d) => JSON.stringify(d).slice(0, 1000))).toEqual([]);

    // Every subscription the fuzzed user has is listed once, the list's total is the row count, and
    // every guid it has had resolves through GET. (Plain fetch: the stored feed_urls may have an
    // upper-case scheme, which test/support/openapi-check's "url" format refuses.)
    const get = async (path: string, headers: Record<string, string> = {}) => {
      const response = await fetch(new URL(path, app.url), {
        headers: { authorization: `Bearer ${world.alice.token}`, ...headers },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const rows: { id: string; deleted: boolean; merged: boolean }[] = await dataSource.query(
      `SELECT id, deleted IS NOT NULL AS deleted, merged_into IS NOT NULL AS merged
         FROM "${schema}".subscriptions WHERE user_id = $1`,
      [world.alice.id],
    );
    expect(rows.length).toBeGreaterThan(0);
    const listed: string[] = [];
    for (let page = 1; ; page += 1) {
      const { status, body } = await get(`/v1/subscriptions?per_page=100&page=${page}`);
      expect(status).toBe(200);
      expect(body.total).toBe(rows.length);
      listed.push(...body.subscriptions.map((item: { guid: string }) => item.guid));
      if (!body.next) break;
    }
    expect(listed.sort()).toEqual(rows.map((row) => row.id).sort());
    const guids: { guid: string; deleted: boolean; merged: boolean }[] = await dataSource.query(
      `SELECT g.guid, s.deleted IS NOT NULL AS deleted, s.merged_into IS NOT NULL AS merged
         FROM "${schema}".subscription_guids g
         JOIN "${schema}".subscriptions s ON s.user_id = g.user_id AND s.id = g.subscription_id
        WHERE g.user_id = $1`,
      [world.alice.id],
    );
    const unreachable: string[] = [];
    for (let i = 0; i < guids.length; i += 20) {
      await Promise.all(
        guids.slice(i, i + 20).map(async ({ guid, deleted, merged }) => {
          const { status, body } = await get(`/v1/subscriptions/${guid}`);
          // A merged subscription answers as the one it was merged into, deleted or not.
          const expected = merged ? [200, 410] : [deleted ? 410 : 200];
          if (!expected.includes(status) || (status === 200 && body.guid !== guid))
            unreachable.push(`${guid} → ${status} ${JSON.stringify(body)}`);
        }),
      );
    }
    expect(unreachable).toEqual([]);

    // The sync face lists every subscription of Alice's once (each has a sync_id, whichever face
    // made it), its single route answers each as listed, and a full sync lists the same ones.
    const syncGet = (path: string) => get(path, { 'client-id': '5e1f0c3a-2b4d-4e6f-8a9b-0c1d2e3f4a5b' });
    const entities: { sync_id: string }[] = [];
    for (let path = '/api/v1/subscriptions?include_unsubscribed=true&limit=1000'; ;) {
      const { status, body } = await syncGet(path);
      expect(status).toBe(200);
      entities.push(...body.results);
      if (body.next === undefined) break;
      path = body.next;
    }
    const syncIds = entities.map((entity) => entity.sync_id);
    expect(new Set(syncIds).size).toBe(rows.length);
    expect(syncIds).toHaveLength(rows.length);
    const synced: { data: { sync_id: string } }[] = [];
    for (let path = '/api/v1/sync?include_own=true&limit=1000'; ;) {
      const { status, body } = await syncGet(path);
      expect(status).toBe(200);
      synced.push(...body.results);
      if (!body.has_more) break;
      path = body.next_since;
    }
    expect(synced.map((change) => change.data)).toEqual(expect.arrayContaining(entities));
    expect(synced).toHaveLength(entities.length);
    const unlike: string[] = [];
    for (let i = 0; i < entities.length; i += 20) {
      await Promise.all(
        entities.slice(i, i + 20).map(async (entity) => {
          const { status, body } = await syncGet(`/api/v1/subscriptions/${entity.sync_id}`);
          if (status !== 200 || !isDeepStrictEqual(body, entity))
            unlike.push(`${entity.sync_id} → ${status} ${JSON.stringify(body)}`);
        }),
      );
    }
    expect(unlike).toEqual([]);

    // Carol's list, as the model says, in a first download, the simple API and /v1.
    const first = await carolDownload(app, world)(0);
    expect({ add: [...first.add].sort(), remove: first.remove }).toEqual({
      add: model.subscribed(),
      remove: [],
    });
    const simple = await fetch(new URL(`/subscriptions/${world.carol.name}.json`, app.url), {
      headers: { authorization: basicOf(world.carol) },
    });
    expect(((await simple.json()) as string[]).sort()).toEqual(model.subscribed());
    const carolOpa = await fetch(new URL('/v1/subscriptions?per_page=100', app.url), {
      headers: { authorization: `Bearer ${world.carol.token}` },
    });
    const carolItems = ((await carolOpa.json()) as any).subscriptions as {
      feed_url: string;
      is_subscribed: boolean;
    }[];
    expect(
      carolItems
        .filter((item) => item.is_subscribed)
        .map((item) => item.feed_url)
        .sort(),
    ).toEqual(model.subscribed());
    expect(carolItems.length).toBe(model.feeds.size);

    // Alice's first download lists exactly her subscribed feeds (not deleted, not merged away).
    const aliceFirst = await fetch(new URL(`/api/2/subscriptions/${world.alice.name}/final.json`, app.url), {
      headers: { authorization: `Bearer ${world.alice.token}` },
    });
    expect(aliceFirst.status).toBe(200);
    const aliceDownload = (await aliceFirst.json()) as { add: string[]; remove: string[] };
    const subscribedRows: { feed_url: string }[] = await dataSource.query(
      `SELECT DISTINCT feed_url FROM "${schema}".subscriptions
        WHERE user_id = $1 AND is_subscribed AND deleted IS NULL AND merged_into IS NULL`,
      [world.alice.id],
    );
    expect([...aliceDownload.add].sort()).toEqual(subscribedRows.map((row) => row.feed_url).sort());
    expect(aliceDownload.remove).toEqual([]);

    // The fuzzed answers of documented routes match the served OpenAPI document (schemes written in
    // lower case first: the support check's "url" format is case-sensitive, URL schemes are not).
    const document = await (await fetch(new URL('/openapi.json', app.url))).json();
    const lowerSchemes = (value: unknown): unknown =>
      value === undefined
        ? undefined
        : JSON.parse(JSON.stringify(value).replace(/"(https?):\/\//gi, (all) => all.toLowerCase()));
    const answers = recorded.map((answer) => ({ ...answer, body: lowerSchemes(answer.body) }));
    expect(checkAgainstOpenApi(document as Parameters<typeof checkAgainstOpenApi>[0], answers)).toEqual([]);
  }, 180_000);
});

describe('HTTP fuzzing with every rate-limit bucket empty', () => {
  let app: CastlogUnderTest;
  let world: World;

  beforeAll(async () => {
    // One request a minute per user and per client address: each takes its one request below.
    app = await startCastlog({ log: 'postgres', env: { RATE_LIMIT_PER_MINUTE: '1' } });
    const [alice, bob, carol] = [await app.freshUser(), await app.freshUser(), await app.freshUser()];
    const seeded = await app.as(alice).post('/v1/subscriptions', {
      subscriptions: [{ feed_url: 'https://limited.example.com/rss', guid: randomUUID() }],
    });
    expect(seeded.status).toBe(200);
    expect((await app.as(bob).get('/v1/subscriptions')).status).toBe(200);
    const login = await app.anonymous.post('/v1/auth/login', {
      username: alice.name,
      password: alice.password,
    });
    expect(login.status).toBe(200);
    world = {
      alice,
      bob,
      carol,
      refreshToken: login.body.refresh_token,
      knownGuids: seeded.body.success.map((item: { guid: string }) => item.guid),
      deletionIds: [],
      aliceSession: '',
      // No draft login: the address's one request a minute went to /v1's.
      ...emptySyncWorld(),
    };
  });
  afterAll(() => app?.close());

  it('answers 429 with Retry-After and the error body, unless the request is refused before the limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(writePlans, readPlans, authPlans, gpodderPlansFor(false), syncDraftPlans),
        async (plan) => {
          await sendAndCheck(app.url, world, plan, allowedWhenLimited);
        },
      ),
      params(80),
    );
  }, 240_000);
});
