import { ApiResponse } from '../support/api-client';
import { errorBody } from '../support/contract';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

const basic = (name: string, password: string) =>
  `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;
const login = (user: string) => `/api/2/auth/${encodeURIComponent(user)}/login.json`;
const logout = (user: string) => `/api/2/auth/${encodeURIComponent(user)}/logout.json`;

/** The session a response's Set-Cookie gives, with the cookie's attributes. */
function sessionCookieOf(response: ApiResponse): { value: string; attributes: string[] } | undefined {
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith('sessionid='));
  if (!cookie) return undefined;
  const [pair, ...attributes] = cookie.split(';').map((part) => part.trim());
  return { value: pair!.slice('sessionid='.length), attributes };
}

describe('gpodder.net authentication', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  const post = (path: string, headers: Record<string, string> = {}) =>
    app.anonymous.request('POST', path, { headers });

  const expect401 = (response: ApiResponse) => {
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
    expect(response.body).toEqual(errorBody(401, 'User not authorized'));
    expect(sessionCookieOf(response)).toBeUndefined();
  };

  it('logs in with Basic credentials: 200, and an HttpOnly session cookie', async () => {
    const response = await post(login(alice.name), { authorization: basic(alice.name, alice.password) });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({});
    const cookie = sessionCookieOf(response);
    expect(cookie?.value).toMatch(/^cl_[\w-]{43}$/);
    expect(cookie?.attributes).toEqual(
      expect.arrayContaining(['HttpOnly', 'Path=/', 'SameSite=Lax', 'Max-Age=1209600']),
    );
  });

  it('answers 401 with the Basic challenge and the error body to a wrong password or none', async () => {
    expect401(await post(login(alice.name), { authorization: basic(alice.name, 'wrong password') }));
    expect401(await post(login(alice.name)));
    expect401(await post(login('nobody-by-that-name'), { authorization: basic('nobody-by-that-name', 'x') }));
  });

  it('answers 401 when the path names another user, whatever the credentials prove', async () => {
    const bob = await app.freshUser();
    expect401(await post(login(bob.name), { authorization: basic(alice.name, alice.password) }));
    expect401(await post(login(bob.name), { authorization: `Bearer ${alice.token}` }));
    const session = sessionCookieOf(
      await post(login(alice.name), { authorization: basic(alice.name, alice.password) }),
    )!;
    expect401(await post(login(bob.name), { cookie: `sessionid=${session.value}` }));
    // gpodder.net's documented 400 for a logout with another user's cookie, whatever else is sent
    for (const authorization of [undefined, basic(bob.name, bob.password)]) {
      const refused = await post(logout(bob.name), {
        cookie: `sessionid=${session.value}`,
        ...(authorization === undefined ? {} : { authorization }),
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual(
        errorBody(
          400,
          "Input could not be validated: the session cookie is another user's: log out as that user",
        ),
      );
      expect(refused.headers.getSetCookie()).toEqual([]);
    }
    // bob's own credentials still work, and alice's session was not ended by the refused logout
    expect((await post(login(bob.name), { authorization: basic(bob.name, bob.password) })).status).toBe(200);
    expect((await post(login(alice.name), { cookie: `sessionid=${session.value}` })).status).toBe(200);
  });

  it('authenticates by the session cookie alone until logout ends the session', async () => {
    const loggedIn = await post(login(alice.name), { authorization: basic(alice.name, alice.password) });
    const session = sessionCookieOf(loggedIn)!;
    const cookie = `sessionid=${session.value}`;

    const again = await post(login(alice.name), { cookie });
    expect(again.status).toBe(200);
    expect(again.headers.getSetCookie()).toHaveLength(1);
    expect(sessionCookieOf(again)?.value).toBe(session.value);
    // Any request the cookie authenticates gives it back with the session's expiry, which use renews.
    const devices = await app.anonymous.request('GET', `/api/2/devices/${alice.name}.json`, {
      headers: { cookie },
    });
    expect(devices.status).toBe(200);
    expect(sessionCookieOf(devices)).toEqual({
      value: session.value,
      attributes: expect.arrayContaining([expect.stringMatching(/^Max-Age=\d+$/), 'HttpOnly']),
    });
    const maxAge = Number(
      sessionCookieOf(devices)!
        .attributes.find((a) => a.startsWith('Max-Age='))!
        .slice(8),
    );
    expect(maxAge).toBeGreaterThan(14 * 86_400 - 60);
    expect(maxAge).toBeLessThanOrEqual(14 * 86_400);

    const out = await post(logout(alice.name), { cookie });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({});
    expect(sessionCookieOf(out)).toEqual({
      value: '',
      attributes: expect.arrayContaining(['Max-Age=0', 'Path=/', 'HttpOnly']),
    });
    expect401(await post(login(alice.name), { cookie }));
    // logged out already: 200 again, as gpodder.net documents
    const again2 = await post(logout(alice.name), { cookie });
    expect(again2.status).toBe(200);
    expect(again2.body).toEqual({});
    expect(await app.users.sessionOwner(session.value)).toBeNull();
  });

  it('logs out without a cookie or credentials: 200 {}, whatever the path names', async () => {
    for (const name of [alice.name, 'nobody-by-that-name']) {
      const out = await post(logout(name));
      expect(out.status).toBe(200);
      expect(out.body).toEqual({});
      expect(out.headers.get('www-authenticate')).toBeNull();
      expect(sessionCookieOf(out)?.value).toBe('');
    }
    // Credentials are not read, right or wrong: only a cookie names a session to end.
    for (const authorization of [basic(alice.name, 'wrong password'), `Bearer ${alice.token}`]) {
      const out = await post(logout(alice.name), { authorization });
      expect(out.status).toBe(200);
      expect(out.body).toEqual({});
    }
    // A cookie naming no session at all: logged out already.
    const unknown = await post(logout(alice.name), { cookie: 'sessionid=cl_nothing-like-a-session' });
    expect(unknown.status).toBe(200);
    // Alice's live session is untouched by all of it.
    const session = sessionCookieOf(
      await post(login(alice.name), { authorization: basic(alice.name, alice.password) }),
    )!;
    await post(logout(alice.name), { authorization: basic(alice.name, alice.password) });
    expect((await app.users.sessionOwner(session.value))?.userId).toBe(alice.id);
  });

  it('accepts a Bearer token; the session cookie is no Bearer token and no /v1 credential', async () => {
    const byToken = await post(login(alice.name), { authorization: `Bearer ${alice.token}` });
    expect(byToken.status).toBe(200);
    const session = sessionCookieOf(byToken)!.value;
    expect401(await post(login(alice.name), { authorization: `Bearer ${session}` }));
    const v1 = await app.anonymous.get('/v1/subscriptions', { cookie: `sessionid=${session}` });
    expect(v1.status).toBe(401);
    expect(v1.headers.get('www-authenticate')).toMatch(/Bearer/);
    const v1Bearer = await app.anonymous.withAuthorization(`Bearer ${session}`).get('/v1/subscriptions');
    expect(v1Bearer.status).toBe(401);
  });

  it('sets the session cookie on every answer to Basic, reusing a live session the request carries', async () => {
    const first = sessionCookieOf(
      await post(login(alice.name), { authorization: basic(alice.name, alice.password) }),
    )!;
    const kept = await post(login(alice.name), {
      authorization: basic(alice.name, alice.password),
      cookie: `sessionid=${first.value}`,
    });
    expect(sessionCookieOf(kept)?.value).toBe(first.value);
    const fresh = await post(login(alice.name), { authorization: basic(alice.name, alice.password) });
    expect(sessionCookieOf(fresh)?.value).toMatch(/^cl_/);
    expect(sessionCookieOf(fresh)?.value).not.toBe(first.value);
    const [{ n }] = await app.runtime.database.dataSource.query(
      `SELECT count(*)::int AS n FROM castlog_auth.tokens WHERE user_id = $1 AND kind = 'session'`,
      [alice.id],
    );
    expect(n).toBe(2);
  });
});

describe('gpodder.net authentication with a rate limit of 3 a minute', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres', env: { RATE_LIMIT_PER_MINUTE: '3' } })));
  afterAll(() => app?.close());

  it('limits each user, whichever credentials prove who it is', async () => {
    const alice = await app.freshUser();
    const bob = await app.freshUser();
    const as = (authorization: string) =>
      app.anonymous.request('POST', login(alice.name), { headers: { authorization } });
    expect((await as(basic(alice.name, alice.password))).status).toBe(200);
    expect((await as(`Bearer ${alice.token}`)).status).toBe(200);
    expect((await as(basic(alice.name, alice.password))).status).toBe(200);
    const limited = await as(`Bearer ${alice.token}`);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual(errorBody(429, 'Too many requests'));
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const other = await app.anonymous.request('POST', login(bob.name), {
      headers: { authorization: `Bearer ${bob.token}` },
    });
    expect(other.status).toBe(200);
  });

  it('counts failed credentials against the client address, as on /v1', async () => {
    const carol = await app.freshUser();
    const failures: number[] = [];
    for (let i = 0; i < 4; i += 1)
      failures.push(
        (
          await app.anonymous.request('POST', login(carol.name), {
            headers: { authorization: basic(carol.name, `wrong ${i}`) },
          })
        ).status,
      );
    expect(failures).toEqual([401, 401, 401, 429]);
  });
});

describe('gpodder.net logout with a rate limit of 3 a minute', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres', env: { RATE_LIMIT_PER_MINUTE: '3' } })));
  afterAll(() => app?.close());

  it('counts cookies naming no session as failed credentials of the address', async () => {
    const dave = await app.freshUser();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1)
      statuses.push(
        (
          await app.anonymous.request('POST', logout(dave.name), {
            headers: { cookie: `sessionid=cl_guessed-${i}` },
          })
        ).status,
      );
    expect(statuses).toEqual([200, 200, 200, 429]);
    // without a cookie there is nothing to look up, and nothing refused
    expect((await app.anonymous.request('POST', logout(dave.name))).status).toBe(200);
  });
});
