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
import { openAuthTestDatabase } from '../../../../test/support/databases';
import { poll } from '../../../../test/support/until';
import { AuthModule } from './auth.module';
import { Authenticated, addAuthSecuritySchemes } from './credentials.guard';
import { CurrentUser } from './current-user.decorator';

/** A route behind the guards, as the API's controllers use them (declared outside AuthModule). */
@Controller('v1/whoami')
@Authenticated()
class WhoAmIController {
  @Get()
  whoAmI(@CurrentUser() userId: string) {
    return { userId };
  }
}

let dataSource: DataSource;
let store: AuthStore;
const apps: NestFastifyApplication[] = [];

async function startApp(rateLimitPerMinute: number): Promise<NestFastifyApplication> {
  const config = loadConfig({ RATE_LIMIT_PER_MINUTE: String(rateLimitPerMinute), ACCESS_TOKEN_TTL: '15m' });
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

  const moduleRef = await Test.createTestingModule({
    imports: [TestRuntimeModule, AuthModule],
    controllers: [WhoAmIController],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter());
  app.useGlobalFilters(new ErrorBodyFilter(1));
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  apps.push(app);
  return app;
}

beforeAll(async () => {
  dataSource = await openAuthTestDatabase('castlog_auth_api');
  store = new AuthStore(dataSource);
});

afterAll(async () => {
  for (const app of apps) await app.close();
  await dataSource?.destroy();
});

async function freshUser(password = 'pw: with colon') {
  const user = await store.addUser(`api-${randomBytes(4).toString('hex')}`, password);
  return { ...user, password };
}

describe('with a generous rate limit', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => (app = await startApp(10_000)));

  const post = (url: string, payload: unknown) =>
    app.inject({ method: 'POST', url, payload: payload as object });
  const whoAmI = (authorization?: string) =>
    app.inject({ method: 'GET', url: '/v1/whoami', headers: authorization ? { authorization } : {} });
  const basic = (name: string, password: string) =>
    `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;

  describe('POST /v1/auth/login', () => {
    it('answers 200 with the token shape, not cacheable', async () => {
      const user = await freshUser();
      const response = await post('/v1/auth/login', { username: user.name, password: user.password });
      expect(response.statusCode).toBe(200);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.json()).toEqual({
        access_token: expect.stringMatching(/^cl_/),
        token_type: 'Bearer',
        expires_in: 900,
        refresh_token: expect.stringMatching(/^cl_/),
      });
      const me = await whoAmI(`Bearer ${response.json().access_token}`);
      expect(me.statusCode).toBe(200);
      expect(me.json()).toEqual({ userId: user.id });
    });

    it('answers 401 for a wrong password and for an unknown user alike', async () => {
      const user = await freshUser();
      const wrong = await post('/v1/auth/login', { username: user.name, password: 'nope' });
      const unknown = await post('/v1/auth/login', { username: 'nobody-at-all', password: 'nope' });
      expect(wrong.statusCode).toBe(401);
      expect(unknown.statusCode).toBe(401);
      expect(wrong.json().message).toBe('User not authorized');
      expect(unknown.json()).toEqual(wrong.json());
    });

    it.each([
      ['a missing password', { username: 'alice' }, 'password must be a string'],
      ['a numeric username', { username: 1, password: 'x' }, 'username must be a string'],
      ['an array body', [], 'the body must be a JSON object'],
    ])('answers 405 for %s', async (_case, body, detail) => {
      const response = await post('/v1/auth/login', body);
      expect(response.statusCode).toBe(405);
      expect(response.json()).toEqual({ code: '405', message: `Input could not be validated: ${detail}` });
    });

    it('answers 405 for a request without a body', async () => {
      const response = await app.inject({ method: 'POST', url: '/v1/auth/login' });
      expect(response.statusCode).toBe(405);
    });
  });

  describe('POST /v1/auth/refresh', () => {
    it('rotates the refresh token', async () => {
      const user = await freshUser();
      const login = (await post('/v1/auth/login', { username: user.name, password: user.password })).json();
      const refreshed = await post('/v1/auth/refresh', { refresh_token: login.refresh_token });
      expect(refreshed.statusCode).toBe(200);
      expect(refreshed.json()).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
      expect((await whoAmI(`Bearer ${refreshed.json().access_token}`)).statusCode).toBe(200);

      expect((await post('/v1/auth/refresh', { refresh_token: login.refresh_token })).statusCode).toBe(401);
      expect((await post('/v1/auth/refresh', { refresh_token: login.access_token })).statusCode).toBe(401);
      expect((await post('/v1/auth/refresh', { token: 'x' })).json()).toEqual({
        code: '405',
        message: 'Input could not be validated: refresh_token must be a string',
      });
    });
  });

  describe('the credentials guard', () => {
    it('accepts a CLI token and Basic credentials', async () => {
      const user = await freshUser();
      const { token } = await store.issueToken(user.name, 'cli', 60_000);
      expect((await whoAmI(`Bearer ${token}`)).json()).toEqual({ userId: user.id });
      expect((await whoAmI(basic(user.name, user.password))).json()).toEqual({ userId: user.id });
    });

    it('refuses a token it has seen once that token is revoked, deleted with its user, or changed by SQL', async () => {
      const refusedSoon = (header: string) =>
        poll(`${header} to be refused`, async () => (await whoAmI(header)).statusCode === 401, {
          timeoutMs: 5000,
          everyMs: 20,
        });
      const user = await freshUser();
      const [revoked, expired, removed] = [
        await store.issueToken(user.name, 'cli', 60_000),
        await store.issueToken(user.name, 'access', 60_000),
        await store.issueToken((await freshUser()).name, 'cli', 60_000),
      ];
      for (const { token } of [revoked, expired, removed])
        expect((await whoAmI(`Bearer ${token}`)).statusCode).toBe(200);

      await store.revokeToken(revoked.token);
      await dataSource.query(`UPDATE castlog_auth.tokens SET expires_at = now() WHERE id = $1`, [expired.id]);
      await dataSource.query(
        `DELETE FROM castlog_auth.users WHERE id = (SELECT user_id FROM castlog_auth.tokens WHERE id = $1)`,
        [removed.id],
      );
      // Within the cache's 60 s lifetime: only the change notices can make these 401.
      for (const { token } of [revoked, expired, removed]) await refusedSoon(`Bearer ${token}`);
    });

    it('checks a right password once while it is remembered, a wrong one every time', async () => {
      const user = await freshUser();
      const check = jest.spyOn(app.get(AuthStore), 'authenticatePassword');
      try {
        for (let i = 0; i < 3; i += 1)
          expect((await whoAmI(basic(user.name, user.password))).json()).toEqual({ userId: user.id });
        expect(check).toHaveBeenCalledTimes(1);
        for (let i = 0; i < 3; i += 1)
          expect((await whoAmI(basic(user.name, `${user.password}x`))).statusCode).toBe(401);
        expect(check).toHaveBeenCalledTimes(4);
      } finally {
        check.mockRestore();
      }
    });

    it('refuses remembered Basic credentials once the password changes or the user is removed, in every instance', async () => {
      const other = await startApp(10_000);
      const whoAmIOn = (instance: NestFastifyApplication, authorization: string) =>
        instance.inject({ method: 'GET', url: '/v1/whoami', headers: { authorization } });
      const refusedSoon = (instance: NestFastifyApplication, header: string) =>
        poll(`${header} to be refused`, async () => (await whoAmIOn(instance, header)).statusCode === 401, {
          timeoutMs: 5000,
          everyMs: 20,
        });
      const changed = await freshUser();
      const removed = await freshUser();
      for (const instance of [app, other])
        for (const user of [changed, removed])
          expect((await whoAmIOn(instance, basic(user.name, user.password))).statusCode).toBe(200);

      await dataSource.query(`UPDATE castlog_auth.users SET password_hash = $2 WHERE id = $1`, [
        changed.id,
        await hashPassword('new password'),
      ]);
      await store.removeUser(removed.name);
      // Within the 60 s lifetime: only the change notices can make these 401.
      for (const instance of [app, other]) {
        await refusedSoon(instance, basic(changed.name, changed.password));
        await refusedSoon(instance, basic(removed.name, removed.password));
        expect((await whoAmIOn(instance, basic(changed.name, 'new password'))).json()).toEqual({
          userId: changed.id,
        });
      }
    });

    it('accepts an app password as Basic password, checked every time without scrypt, refused once revoked', async () => {
      const user = await freshUser();
      const other = await freshUser();
      const { id, password } = await store.createAppPassword(user.id, 'Kasts');
      const scrypt = jest.spyOn(app.get(AuthStore), 'authenticatePassword');
      const lookUp = jest.spyOn(app.get(AuthStore), 'appPasswordOwner');
      try {
        for (let i = 0; i < 2; i += 1)
          expect((await whoAmI(basic(user.name, password))).json()).toEqual({ userId: user.id });
        expect(lookUp).toHaveBeenCalledTimes(2);
        expect((await whoAmI(basic(other.name, password))).statusCode).toBe(401);
        expect(scrypt).not.toHaveBeenCalled();
      } finally {
        scrypt.mockRestore();
        lookUp.mockRestore();
      }
      expect((await whoAmI(basic(user.name, user.password))).json()).toEqual({ userId: user.id });
      expect(await store.revokeAppPassword(user.id, id)).toBe(true);
      expect((await whoAmI(basic(user.name, password))).statusCode).toBe(401);
      expect((await whoAmI(`Bearer ${password}`)).statusCode).toBe(401);
    });

    it('answers 401 for missing, malformed, wrong and revoked credentials', async () => {
      const user = await freshUser();
      const { token } = await store.issueToken(user.name, 'cli', 60_000);
      await store.revokeToken(token);
      for (const header of [undefined, 'Bearer', 'Basic', `Bearer ${token}`, basic(user.name, 'wrong')]) {
        const response = await whoAmI(header);
        expect(response.statusCode).toBe(401);
        expect(response.json().message).toBe('User not authorized');
      }
    });
  });

  it('describes the routes and the security schemes in the OpenAPI document', () => {
    const document = SwaggerModule.createDocument(app, addAuthSecuritySchemes(new DocumentBuilder()).build());
    expect(document.components?.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      basic: expect.objectContaining({ type: 'http', scheme: 'basic' }),
      session: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'sessionid' }),
    });
    const login = document.paths['/v1/auth/login']?.post;
    expect(login?.tags).toEqual(['auth']);
    expect(login?.requestBody).toMatchObject({
      content: {
        'application/json': {
          schema: expect.objectContaining({ required: ['username', 'password'] }),
        },
      },
    });
    expect(login?.responses['200']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/TokenResponse' } } },
    });
    expect(Object.keys(login?.responses ?? {}).sort()).toEqual(['200', '401', '405', '429', '503']);
    expect(document.paths['/v1/auth/refresh']?.post?.requestBody).toMatchObject({
      content: {
        'application/json': { schema: expect.objectContaining({ required: ['refresh_token'] }) },
      },
    });
    expect(document.components?.schemas?.TokenResponse).toMatchObject({
      required: ['access_token', 'token_type', 'expires_in', 'refresh_token'],
    });
    expect(document.paths['/v1/whoami']?.get?.security).toEqual([{ bearer: [] }, { basic: [] }]);
    expect(Object.keys(document.paths['/v1/whoami']?.get?.responses ?? {})).toEqual(
      expect.arrayContaining(['401', '429', '503']),
    );
  });
});

describe('with a rate limit of 2 a minute', () => {
  it('answers 429 with Retry-After to the third request of a user, other users unaffected', async () => {
    const app = await startApp(2);
    const alice = await freshUser();
    const bob = await freshUser();
    const get = async (user: { name: string }) => {
      const { token } = await store.issueToken(user.name, 'cli', 60_000);
      return app.inject({ method: 'GET', url: '/v1/whoami', headers: { authorization: `Bearer ${token}` } });
    };
    expect((await get(alice)).statusCode).toBe(200);
    expect((await get(alice)).statusCode).toBe(200);
    const limited = await get(alice);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ code: '429', message: 'Too many requests' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(29);
    expect((await get(bob)).statusCode).toBe(200);
  });

  it('counts failed Basic credentials as before: past the limit, remembered ones answer 429 too', async () => {
    const app = await startApp(2);
    const user = await freshUser();
    const remoteAddress = `127.0.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 2}`;
    const whoAmI = (password: string) =>
      app.inject({
        method: 'GET',
        url: '/v1/whoami',
        remoteAddress,
        headers: { authorization: `Basic ${Buffer.from(`${user.name}:${password}`).toString('base64')}` },
      });
    expect((await whoAmI(user.password)).statusCode).toBe(200);
    expect((await whoAmI('wrong')).statusCode).toBe(401);
    expect((await whoAmI('wrong')).statusCode).toBe(401);
    const blocked = await whoAmI(user.password);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toEqual({ code: '429', message: 'Too many requests' });
  });

  it('counts wrong app passwords as failed credentials like any others', async () => {
    const app = await startApp(2);
    const user = await freshUser();
    const { password } = await store.createAppPassword(user.id, 'Kasts');
    const remoteAddress = `127.1.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 2}`;
    const whoAmI = (secret: string) =>
      app.inject({
        method: 'GET',
        url: '/v1/whoami',
        remoteAddress,
        headers: { authorization: `Basic ${Buffer.from(`${user.name}:${secret}`).toString('base64')}` },
      });
    const wrong = `clapp_${'A'.repeat(43)}`;
    expect((await whoAmI(password)).statusCode).toBe(200);
    expect((await whoAmI(wrong)).statusCode).toBe(401);
    expect((await whoAmI(wrong)).statusCode).toBe(401);
    expect((await whoAmI(password)).statusCode).toBe(429);
  });
});
