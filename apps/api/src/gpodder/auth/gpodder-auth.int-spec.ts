import fastifyCookie from '@fastify/cookie';
import { Controller, Get, Global, Module } from '@nestjs/common';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AuthStore, hashPassword } from '@castlog/auth';
import { CONFIG, loadConfig } from '@castlog/config';
import { ErrorBodyFilter } from '@castlog/http';
import { DATABASE } from '@castlog/runtime';
import { DependencyHealth } from '@castlog/supervision';
import { openAuthTestDatabase } from '../../../../../test/support/databases';
import { poll } from '../../../../../test/support/until';
import { addAuthSecuritySchemes } from '../../auth/credentials.guard';
import { GpodderAuthModule, GpodderAuthenticated, GpodderIdentity, GpodderUser } from './gpodder-auth';

/** A gpodder-like data route behind the guard (declared outside GpodderAuthModule, as the data
 * routes are). */
@Controller('api/2/whoami')
@GpodderAuthenticated()
class WhoAmIController {
  @Get(':user/:device.json')
  whoAmI(@GpodderUser() user: GpodderIdentity) {
    return user;
  }
}

let dataSource: DataSource;
let store: AuthStore;
const apps: NestFastifyApplication[] = [];

async function startApp(rateLimitPerMinute: number): Promise<NestFastifyApplication> {
  const config = loadConfig({ RATE_LIMIT_PER_MINUTE: String(rateLimitPerMinute) });
  @Global()
  @Module({
    providers: [
      { provide: DataSource, useValue: dataSource },
      { provide: CONFIG, useValue: config },
      { provide: DependencyHealth, useValue: new DependencyHealth() },
      {
        provide: DATABASE,
        useValue: { url: (dataSource.options as { url: string }).url, dataSource, schema: 'castlog' },
      },
    ],
    exports: [DataSource, CONFIG, DATABASE, DependencyHealth],
  })
  class TestRuntimeModule {}

  @Module({ imports: [GpodderAuthModule], controllers: [WhoAmIController] })
  class TestGpodderModule {}

  const moduleRef = await Test.createTestingModule({
    imports: [TestRuntimeModule, TestGpodderModule],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter());
  app.useGlobalFilters(new ErrorBodyFilter(1));
  await app.register(fastifyCookie);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  apps.push(app);
  return app;
}

beforeAll(async () => {
  dataSource = await openAuthTestDatabase('castlog_gpodder_auth');
  store = new AuthStore(dataSource);
});

afterAll(async () => {
  for (const app of apps) await app.close();
  await dataSource?.destroy();
});

async function freshUser() {
  const password = `pw:${randomBytes(6).toString('hex')}`;
  const user = await store.addUser(`gp-${randomBytes(4).toString('hex')}`, password);
  return { ...user, password };
}

const basic = (name: string, password: string) =>
  `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;
const sessionOf = (setCookie: string | string[] | undefined) =>
  /^sessionid=([^;]+)/.exec(String(setCookie))?.[1];
const sessionRows = async (userId: string): Promise<number> =>
  Number(
    (
      await dataSource.query(
        `SELECT count(*) AS n FROM castlog_auth.tokens WHERE user_id = $1 AND kind = 'session'`,
        [userId],
      )
    )[0].n,
  );

describe('with a generous rate limit', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => (app = await startApp(10_000)));

  const whoAmI = (user: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url: `/api/2/whoami/${encodeURIComponent(user)}/phone.json`, headers });
  const expect401 = (response: Awaited<ReturnType<typeof whoAmI>>) => {
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Basic realm="castlog"');
    expect(response.json()).toEqual({ code: '401', message: 'User not authorized' });
    expect(response.headers['set-cookie']).toBeUndefined();
  };

  it('accepts Basic credentials of the path user, and answers with a session cookie', async () => {
    const user = await freshUser();
    const response = await whoAmI(user.name, { authorization: basic(user.name, user.password) });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ id: user.id, name: user.name });
    const cookie = String(response.headers['set-cookie']);
    expect(cookie).toMatch(/^sessionid=cl_[\w-]{43}; /);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Max-Age=1209600/);
    expect(cookie).not.toMatch(/; Secure/);

    const bySession = await whoAmI(user.name, { cookie: `sessionid=${sessionOf(cookie)}` });
    expect(bySession.statusCode).toBe(200);
    expect(bySession.json()).toEqual({ id: user.id, name: user.name });
    // The same session again, with its expiry (which use renews, past half its lifetime).
    const again = String(bySession.headers['set-cookie']);
    expect(sessionOf(again)).toBe(sessionOf(cookie));
    expect(again).toMatch(/; Max-Age=120(9[5-9]\d\d|9600); /);
  });

  it('keeps the session a Basic request already carries, instead of issuing another', async () => {
    const user = await freshUser();
    const first = await whoAmI(user.name, { authorization: basic(user.name, user.password) });
    const session = sessionOf(first.headers['set-cookie'])!;
    expect(await sessionRows(user.id)).toBe(1);
    const again = await whoAmI(user.name, {
      authorization: basic(user.name, user.password),
      cookie: `other=1; sessionid=${session}`,
    });
    expect(again.statusCode).toBe(200);
    expect(sessionOf(again.headers['set-cookie'])).toBe(session);
    expect(await sessionRows(user.id)).toBe(1);

    const other = await freshUser();
    const foreign = await whoAmI(other.name, {
      authorization: basic(other.name, other.password),
      cookie: `sessionid=${session}`,
    });
    expect(foreign.statusCode).toBe(200);
    expect(sessionOf(foreign.headers['set-cookie'])).not.toBe(session);
    expect(await sessionRows(other.id)).toBe(1);
  });

  it('checks Basic credentials once while they are remembered, and no longer once the password changes', async () => {
    const user = await freshUser();
    const check = jest.spyOn(app.get(AuthStore), 'authenticatePassword');
    const byPassword = (password: string) => whoAmI(user.name, { authorization: basic(user.name, password) });
    try {
      for (let i = 0; i < 3; i += 1) expect((await byPassword(user.password)).statusCode).toBe(200);
      expect(check).toHaveBeenCalledTimes(1);
      for (let i = 0; i < 2; i += 1) expect401(await byPassword(`${user.password}x`));
      expect(check).toHaveBeenCalledTimes(3);
    } finally {
      check.mockRestore();
    }
    await dataSource.query(`UPDATE castlog_auth.users SET password_hash = $2 WHERE id = $1`, [
      user.id,
      await hashPassword('new password'),
    ]);
    // Within the 60 s lifetime: only the change notice can make this 401.
    await poll(
      'the old password to be refused',
      async () => (await byPassword(user.password)).statusCode === 401,
      {
        timeoutMs: 5000,
        everyMs: 20,
      },
    );
    expect((await byPassword('new password')).statusCode).toBe(200);
  });

  it('accepts an app password as Basic password; the session it buys ends with it, in every instance', async () => {
    const user = await freshUser();
    const other = await startApp(10_000);
    const app1 = await store.createAppPassword(user.id, 'gPodder');
    const app2 = await store.createAppPassword(user.id, 'Kasts');
    const byApp = await whoAmI(user.name, { authorization: basic(user.name, app1.password) });
    expect(byApp.statusCode).toBe(200);
    expect(byApp.json()).toEqual({ id: user.id, name: user.name });
    const bought = sessionOf(byApp.headers['set-cookie'])!;
    const [row] = await dataSource.query(
      `SELECT app_password_id FROM castlog_auth.tokens WHERE token_hash = encode(sha256($1::bytea), 'hex')`,
      [bought],
    );
    expect(row.app_password_id).toBe(app1.id);
    const byOwnPassword = sessionOf(
      (await whoAmI(user.name, { authorization: basic(user.name, user.password) })).headers['set-cookie'],
    )!;
    const cookieOn = (instance: NestFastifyApplication, session: string) =>
      instance.inject({
        method: 'GET',
        url: `/api/2/whoami/${encodeURIComponent(user.name)}/phone.json`,
        headers: { cookie: `sessionid=${session}` },
      });
    for (const instance of [app, other]) expect((await cookieOn(instance, bought)).statusCode).toBe(200);

    expect(await store.revokeAppPassword(user.id, app1.id)).toBe(true);
    expect401(await whoAmI(user.name, { authorization: basic(user.name, app1.password) }));
    // Within the cache's 60 s lifetime: only the change notices can make these 401.
    for (const instance of [app, other])
      await poll(
        'the session to be refused',
        async () => (await cookieOn(instance, bought)).statusCode === 401,
        {
          timeoutMs: 5000,
          everyMs: 20,
        },
      );
    expect((await whoAmI(user.name, { authorization: basic(user.name, app2.password) })).statusCode).toBe(
      200,
    );
    expect((await cookieOn(app, byOwnPassword)).statusCode).toBe(200);
  });

  it("refuses an app password with another user's name, and never runs scrypt for one", async () => {
    const user = await freshUser();
    const other = await freshUser();
    const { password } = await store.createAppPassword(user.id, 'x');
    const check = jest.spyOn(app.get(AuthStore), 'authenticatePassword');
    try {
      expect401(await whoAmI(other.name, { authorization: basic(other.name, password) }));
      expect401(await whoAmI(user.name, { authorization: basic(user.name, `${password}x`) }));
      expect((await whoAmI(user.name, { authorization: basic(user.name, password) })).statusCode).toBe(200);
      expect(check).not.toHaveBeenCalled();
    } finally {
      check.mockRestore();
    }
  });

  it('accepts an access or CLI token as Bearer, without setting a cookie', async () => {
    const user = await freshUser();
    for (const kind of ['cli', 'access'] as const) {
      const { token } = await store.issueToken(user.name, kind, 60_000);
      const response = await whoAmI(user.name, { authorization: `Bearer ${token}` });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ id: user.id, name: user.name });
      expect(response.headers['set-cookie']).toBeUndefined();
    }
  });

  it('answers 401 with the Basic challenge to missing, wrong or misplaced credentials', async () => {
    const user = await freshUser();
    const other = await freshUser();
    const { token } = await store.issueToken(user.name, 'cli', 60_000);
    const session = await store.issueSession(user.id);
    expect401(await whoAmI(user.name));
    expect401(await whoAmI(user.name, { authorization: basic(user.name, 'wrong') }));
    expect401(await whoAmI(user.name, { authorization: 'Basic !!!' }));
    expect401(await whoAmI(user.name, { authorization: `Bearer ${token.slice(0, -1)}x` }));
    // valid credentials, but the path names another user
    expect401(await whoAmI(other.name, { authorization: basic(user.name, user.password) }));
    expect401(await whoAmI(other.name, { authorization: `Bearer ${token}` }));
    expect401(await whoAmI(other.name, { cookie: `sessionid=${session.token}` }));
    // a session is no Bearer token, and a Bearer token no session
    expect401(await whoAmI(user.name, { authorization: `Bearer ${session.token}` }));
    expect401(await whoAmI(user.name, { cookie: `sessionid=${token}` }));
    // an Authorization header decides, even beside a valid session cookie
    expect401(
      await whoAmI(user.name, {
        authorization: basic(user.name, 'wrong'),
        cookie: `sessionid=${session.token}`,
      }),
    );
  });

  describe('POST /api/2/auth/{user}/login.json and logout.json', () => {
    const post = (path: string, headers: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url: path, headers });

    it('log in with Basic, then the cookie alone authenticates until logout', async () => {
      const user = await freshUser();
      const login = await post(`/api/2/auth/${user.name}/login.json`, {
        authorization: basic(user.name, user.password),
      });
      expect(login.statusCode).toBe(200);
      expect(login.json()).toEqual({});
      expect(login.headers['cache-control']).toBe('no-store');
      const session = sessionOf(login.headers['set-cookie'])!;
      expect(session).toBeDefined();
      const cookie = `sessionid=${session}`;

      const again = await post(`/api/2/auth/${user.name}/login.json`, { cookie });
      expect(again.statusCode).toBe(200);
      expect(sessionOf(again.headers['set-cookie'])).toBe(session);
      expect((await whoAmI(user.name, { cookie })).statusCode).toBe(200);

      const logout = await post(`/api/2/auth/${user.name}/logout.json`, { cookie });
      expect(logout.statusCode).toBe(200);
      expect(String(logout.headers['set-cookie'])).toMatch(/^sessionid=; Max-Age=0; /);
      expect(await store.sessionOwner(session)).toBeNull();
      expect401(await whoAmI(user.name, { cookie }));
      const loggedOut = await post(`/api/2/auth/${user.name}/logout.json`, { cookie });
      expect(loggedOut.statusCode).toBe(200);
      expect(loggedOut.json()).toEqual({});
    });

    it('logout answers 200 without a cookie, and 400 for a cookie of another user, whose session it keeps', async () => {
      const user = await freshUser();
      const other = await freshUser();
      const none = await post(`/api/2/auth/${user.name}/logout.json`);
      expect(none.statusCode).toBe(200);
      expect(none.json()).toEqual({});
      const session = await store.issueSession(other.id, 60_000);
      const refused = await post(`/api/2/auth/${user.name}/logout.json`, {
        cookie: `sessionid=${session.token}`,
      });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({
        code: '400',
        message: "Input could not be validated: the session cookie is another user's: log out as that user",
      });
      expect(refused.headers['set-cookie']).toBeUndefined();
      expect((await store.sessionOwner(session.token))?.userId).toBe(other.id);
    });

    it('log in with a Bearer token sets a session too; logout with Basic ends the cookie session', async () => {
      const user = await freshUser();
      const { token } = await store.issueToken(user.name, 'cli', 60_000);
      const login = await post(`/api/2/auth/${user.name}/login.json`, { authorization: `Bearer ${token}` });
      expect(login.statusCode).toBe(200);
      const session = sessionOf(login.headers['set-cookie'])!;
      expect((await store.sessionOwner(session))?.userId).toBe(user.id);

      const logout = await post(`/api/2/auth/${user.name}/logout.json`, {
        authorization: basic(user.name, user.password),
        cookie: `sessionid=${session}`,
      });
      expect(logout.statusCode).toBe(200);
      expect(String(logout.headers['set-cookie'])).toMatch(/^sessionid=; Max-Age=0; /);
      expect(await store.sessionOwner(session)).toBeNull();
      expect(await sessionRows(user.id)).toBe(0);
    });

    it('answer 401 for another user in the path', async () => {
      const user = await freshUser();
      const other = await freshUser();
      expect401(
        await post(`/api/2/auth/${other.name}/login.json`, {
          authorization: basic(user.name, user.password),
        }),
      );
    });
  });

  it('describes login with the three security schemes, 400, 401, 429 and 503, and logout with the cookie alone', () => {
    const document = SwaggerModule.createDocument(app, addAuthSecuritySchemes(new DocumentBuilder()).build());
    expect(document.components?.securitySchemes?.session).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'sessionid' }),
    );
    const login = document.paths['/api/2/auth/{user}/login.json']?.post;
    expect(login?.security).toEqual([{ basic: [] }, { bearer: [] }, { session: [] }]);
    expect(Object.keys(login?.responses ?? {}).sort()).toEqual(['200', '400', '401', '429', '503']);
    expect(login?.parameters).toContainEqual(expect.objectContaining({ name: 'user', in: 'path' }));
    // logout reads the cookie if there is one, and nothing else
    const logout = document.paths['/api/2/auth/{user}/logout.json']?.post;
    expect(logout?.security).toEqual([{ session: [] }, {}]);
    expect(Object.keys(logout?.responses ?? {}).sort()).toEqual(['200', '400', '429', '503']);
    expect(logout?.parameters).toContainEqual(expect.objectContaining({ name: 'user', in: 'path' }));
  });
});

describe('with a rate limit of 2 a minute', () => {
  it('answers 429 with Retry-After to the third request of a user, other users unaffected', async () => {
    const app = await startApp(2);
    const alice = await freshUser();
    const bob = await freshUser();
    const get = async (user: { name: string }) => {
      const { token } = await store.issueToken(user.name, 'cli', 60_000);
      return app.inject({
        method: 'GET',
        url: `/api/2/whoami/${user.name}/phone.json`,
        headers: { authorization: `Bearer ${token}` },
      });
    };
    expect((await get(alice)).statusCode).toBe(200);
    expect((await get(alice)).statusCode).toBe(200);
    const limited = await get(alice);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ code: '429', message: 'Too many requests' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(29);
    expect((await get(bob)).statusCode).toBe(200);
  });

  it('sets the session cookie on a 429 to a Basic request as on any other answer to one', async () => {
    const app = await startApp(2);
    const user = await freshUser();
    const get = () =>
      app.inject({
        method: 'GET',
        url: `/api/2/whoami/${user.name}/phone.json`,
        headers: { authorization: basic(user.name, user.password) },
      });
    expect((await get()).statusCode).toBe(200);
    expect((await get()).statusCode).toBe(200);
    const limited = await get();
    expect(limited.statusCode).toBe(429);
    const cookie = String(limited.headers['set-cookie']);
    expect(cookie).toMatch(/^sessionid=[^;]+;/);
    const token = cookie.slice('sessionid='.length, cookie.indexOf(';'));
    expect((await store.sessionOwner(token))?.userId).toBe(user.id);
  });
});
