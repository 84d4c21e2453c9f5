import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';
import { errorBody, feed, guid } from '../support/contract';

const basic = (name: string, password: string) =>
  `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;

describe('Authentication and users', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  const expect401 = async (authorization: string | undefined) => {
    const response = await app.anonymous.withAuthorization(authorization).get('/v1/subscriptions');
    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody(401, 'User not authorized'));
    expect(response.headers.get('www-authenticate')).toMatch(/Bearer/);
  };

  it('accepts a CLI token, Basic credentials, and a login access token', async () => {
    expect((await app.as(alice).get('/v1/subscriptions')).status).toBe(200);
    expect(
      (await app.anonymous.withAuthorization(basic(alice.name, alice.password)).get('/v1/subscriptions'))
        .status,
    ).toBe(200);
    const login = await app.anonymous.post('/v1/auth/login', {
      username: alice.name,
      password: alice.password,
    });
    expect(login.status).toBe(200);
    expect(login.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: expect.any(Number),
      refresh_token: expect.any(String),
    });
    expect(
      (await app.anonymous.withAuthorization(`Bearer ${login.body.access_token}`).get('/v1/subscriptions'))
        .status,
    ).toBe(200);
  });

  it('refreshes: the new access token works and the used refresh token is spent', async () => {
    const login = await app.anonymous.post('/v1/auth/login', {
      username: alice.name,
      password: alice.password,
    });
    const refreshed = await app.anonymous.post('/v1/auth/refresh', {
      refresh_token: login.body.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    expect(
      (
        await app.anonymous
          .withAuthorization(`Bearer ${refreshed.body.access_token}`)
          .get('/v1/subscriptions')
      ).status,
    ).toBe(200);
    const again = await app.anonymous.post('/v1/auth/refresh', { refresh_token: login.body.refresh_token });
    expect(again.status).toBe(401);
    expect(again.body).toEqual(errorBody(401, 'User not authorized'));
  });

  it('answers 401 with the error body and WWW-Authenticate for every failure kind', async () => {
    await expect401(undefined);
    await expect401('Bearer');
    await expect401('Bearer not-a-token');
    await expect401('Token abc');
    await expect401('Basic !!!');
    await expect401(basic(alice.name, 'wrong password'));
    await expect401(basic('nobody-by-that-name', 'whatever'));
    const expired = await app.users.issueToken(alice.name, 'cli', 60_000, new Date(Date.now() - 3_600_000));
    await expect401(`Bearer ${expired.token}`);
    const revoked = await app.users.issueToken(alice.name, 'cli', 3_600_000);
    expect(await app.users.revokeToken(revoked.token)).toBe(true);
    await expect401(`Bearer ${revoked.token}`);
    for (const [method, path] of [
      ['POST', '/v1/subscriptions'],
      ['GET', `/v1/subscriptions/${guid()}`],
      ['PATCH', `/v1/subscriptions/${guid()}`],
      ['DELETE', `/v1/subscriptions/${guid()}`],
      ['GET', '/v1/deletions/1'],
    ] as const) {
      const response = await app.anonymous.request(method, path, {
        body: method === 'GET' || method === 'DELETE' ? undefined : {},
      });
      expect({ method, path, status: response.status, body: response.body }).toEqual({
        method,
        path,
        status: 401,
        body: errorBody(401, 'User not authorized'),
      });
    }
  });

  it('does not reveal whether a user exists when login fails', async () => {
    const wrongPassword = await app.anonymous.post('/v1/auth/login', {
      username: alice.name,
      password: 'nope',
    });
    const noUser = await app.anonymous.post('/v1/auth/login', {
      username: 'no-such-user-here',
      password: 'nope',
    });
    expect(wrongPassword.status).toBe(401);
    expect(noUser.status).toBe(401);
    expect(noUser.body).toEqual(wrongPassword.body);
  });

  describe('isolation: another user sees 404 on every route, both ways', () => {
    it('keeps subscriptions and deletions apart', async () => {
      const bob = await app.freshUser();
      for (const [owner, other] of [
        [alice, bob],
        [bob, alice],
      ] as const) {
        const g = guid();
        await app.as(owner).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed(), guid: g }] });
        const deletion = await app.as(owner).delete(`/v1/subscriptions/${g}`);
        expect((await app.as(other).get(`/v1/subscriptions/${g}`)).body).toEqual(
          errorBody(404, 'Resource not found'),
        );
        expect((await app.as(other).patch(`/v1/subscriptions/${g}`, { is_subscribed: false })).status).toBe(
          404,
        );
        expect((await app.as(other).delete(`/v1/subscriptions/${g}`)).status).toBe(404);
        expect((await app.as(other).get(`/v1/deletions/${deletion.body.deletion_id}`)).status).toBe(404);
        expect((await app.as(other).get('/v1/subscriptions')).body.subscriptions).not.toContainEqual(
          expect.objectContaining({ guid: g }),
        );
      }
    });

    it('lets two users hold the same guid and feed', async () => {
      const bob = await app.freshUser();
      const [g, url] = [guid(), feed()];
      const a = await app
        .as(alice)
        .post('/v1/subscriptions', { subscriptions: [{ feed_url: url, guid: g }] });
      const b = await app.as(bob).post('/v1/subscriptions', { subscriptions: [{ feed_url: url, guid: g }] });
      expect(a.body.success[0].guid).toBe(g);
      expect(b.body.success[0].guid).toBe(g);
      await app.as(bob).patch(`/v1/subscriptions/${g}`, { is_subscribed: false });
      expect((await app.as(alice).get(`/v1/subscriptions/${g}`)).body.is_subscribed).toBe(true);
    });
  });
});
