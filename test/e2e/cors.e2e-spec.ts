import { basicOf } from '../support/sync-face';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

const APP_ORIGIN = 'https://app.example';
const OTHER_ORIGIN = 'https://elsewhere.example';

/** A preflight as a browser sends it before a request it may not send unasked. */
const preflight = (method: string, headers = 'authorization,content-type') => ({
  origin: APP_ORIGIN,
  'access-control-request-method': method,
  'access-control-request-headers': headers,
});

/**
 * Browser-based clients (CONTRACT.md, gpodder.net face): every answer of the gpodder.net face
 * carries `Access-Control-Allow-Origin: *` and its preflights are answered, as gpodder.net does;
 * `/v1` and the sync draft's face answer CORS only for the origins CORS_ORIGINS names; nothing
 * else (health, metrics) answers CORS.
 */
describe('CORS', () => {
  describe('with CORS_ORIGINS naming one origin', () => {
    let app: CastlogUnderTest;
    let user: TestUser;
    beforeAll(async () => {
      app = await startCastlog({ env: { CORS_ORIGINS: APP_ORIGIN } });
      user = await app.freshUser();
    });
    afterAll(() => app?.close());

    it('lets every origin read the gpodder.net face, its errors too, and answers its preflights', async () => {
      const gpodder = app.anonymous.withAuthorization(basicOf(user));
      for (const path of [`/api/2/devices/${user.name}.json`, `/subscriptions/${user.name}.opml`]) {
        const answer = await gpodder.get(path, { origin: OTHER_ORIGIN });
        expect(answer.status).toBe(200);
        expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      }
      const refused = await app.anonymous.get(`/api/2/devices/${user.name}.json`, { origin: OTHER_ORIGIN });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('access-control-allow-origin')).toBe('*');
      expect(refused.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate/);

      const asked = await app.anonymous.request('OPTIONS', `/api/2/subscriptions/${user.name}/phone.json`, {
        headers: preflight('POST'),
      });
      expect(asked.status).toBe(204);
      expect(asked.headers.get('access-control-allow-origin')).toBe('*');
      expect(asked.headers.get('access-control-allow-methods')).toMatch(/POST/);
      expect(asked.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
      expect(asked.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
    });

    it('lets the named origin, and no other, call /v1 and the sync face', async () => {
      const opa = app.as(user);
      const listed = await opa.get('/v1/subscriptions', { origin: APP_ORIGIN });
      expect(listed.status).toBe(200);
      expect(listed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(listed.headers.get('vary')).toMatch(/Origin/i);
      const other = await opa.get('/v1/subscriptions', { origin: OTHER_ORIGIN });
      expect(other.status).toBe(200);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();

      const asked = await app.anonymous.request(
        'OPTIONS',
        '/v1/subscriptions/0b9f7a52-0a0e-4d6e-9c1e-3c3f0d1f6a10',
        {
          headers: preflight('PATCH'),
        },
      );
      expect(asked.status).toBe(204);
      expect(asked.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(asked.headers.get('access-control-allow-methods')).toMatch(/PATCH/);
      const sync = await app.anonymous.request('OPTIONS', '/api/v1/sync', {
        headers: preflight('POST', 'authorization,content-type,client-id'),
      });
      expect(sync.status).toBe(204);
      expect(sync.headers.get('access-control-allow-headers')).toMatch(/Client-ID/);
    });

    it('answers no CORS on the operational routes', async () => {
      for (const path of ['/health/ready', '/metrics']) {
        const answer = await app.anonymous.get(path, { origin: APP_ORIGIN });
        expect(answer.headers.get('access-control-allow-origin')).toBeNull();
      }
    });
  });

  describe('by default', () => {
    let app: CastlogUnderTest;
    beforeAll(async () => (app = await startCastlog()));
    afterAll(() => app?.close());

    it('answers no CORS on /v1, and its preflight as an unknown route', async () => {
      const user = await app.freshUser();
      const listed = await app.as(user).get('/v1/subscriptions', { origin: APP_ORIGIN });
      expect(listed.headers.get('access-control-allow-origin')).toBeNull();
      const asked = await app.anonymous.request('OPTIONS', '/v1/subscriptions', {
        headers: preflight('POST'),
      });
      expect(asked.status).toBe(404);
      expect(asked.body).toEqual({ code: '404', message: 'Resource not found' });
      expect(asked.headers.get('access-control-allow-origin')).toBeNull();
      // The gpodder.net face answers every origin all the same.
      const gpodder = await app.anonymous.get(`/api/2/devices/${user.name}.json`, { origin: APP_ORIGIN });
      expect(gpodder.headers.get('access-control-allow-origin')).toBe('*');
    });
  });
});
