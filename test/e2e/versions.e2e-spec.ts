import { errorBody } from '../support/contract';
import { CastlogUnderTest, startCastlog } from '../support/start-castlog';

const SYNC_DRAFT = { revision: '8d03a20', root: '/api/v1' };

describe('GET /v1/versions and /v1/capabilities', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres' })));
  afterAll(() => app?.close());

  it('answers the supported versions, one per major at its highest minor, without credentials', async () => {
    const response = await app.anonymous.get('/v1/versions');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ versions: ['v1.0'] });
  });

  it('answers the enabled optional features, without credentials: the sync draft, and the gpodder.net API, on by default', async () => {
    const response = await app.anonymous.get('/v1/capabilities');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      capabilities: { opa_sync_draft: SYNC_DRAFT, gpodder_api: { version: 2 } },
    });
  });

  it('answers 404 with the error body for a major version it does not serve', async () => {
    const response = await app.anonymous.get('/v2/capabilities');
    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody(404, 'Resource not found'));
  });
});

describe('GPODDER_API=off', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres', env: { GPODDER_API: 'off' } })));
  afterAll(() => app?.close());

  it('lists the sync draft alone in the capabilities', async () => {
    const response = await app.anonymous.get('/v1/capabilities');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ capabilities: { opa_sync_draft: SYNC_DRAFT } });
  });

  it('has none of the gpodder.net routes, login and the simple API included: 404 with the error body', async () => {
    const alice = await app.freshUser();
    const basic = `Basic ${Buffer.from(`${alice.name}:${alice.password}`).toString('base64')}`;
    const client = app.anonymous.withAuthorization(basic);
    for (const [method, path] of [
      ['POST', `/api/2/auth/${alice.name}/login.json`],
      ['GET', `/api/2/devices/${alice.name}.json`],
      ['POST', `/api/2/devices/${alice.name}/phone.json`],
      ['GET', `/api/2/subscriptions/${alice.name}/phone.json`],
      ['POST', `/api/2/subscriptions/${alice.name}/phone.json`],
      ['GET', `/api/2/sync-devices/${alice.name}.json`],
      ['GET', `/api/2/episodes/${alice.name}.json`],
      ['POST', `/api/2/episodes/${alice.name}.json`],
      ['GET', `/api/2/settings/${alice.name}/account.json`],
      ['POST', `/api/2/settings/${alice.name}/device.json?device=phone`],
      ['GET', `/subscriptions/${alice.name}.opml`],
      ['GET', `/subscriptions/${alice.name}/phone.txt`],
      ['PUT', `/subscriptions/${alice.name}/phone.json`],
    ]) {
      const response = await client.request(method!, path!, method === 'GET' ? {} : { rawBody: '[]' });
      expect([method, path, response.status, response.body]).toEqual([
        method,
        path,
        404,
        errorBody(404, 'Resource not found'),
      ]);
    }
  });

  it('leaves them out of /openapi.json, and keeps /v1', async () => {
    const document = (await (await fetch(new URL('/openapi.json', app.url))).json()) as {
      paths: Record<string, unknown>;
    };
    const paths = Object.keys(document.paths);
    expect(paths.filter((path) => path.startsWith('/api/2/') || path.startsWith('/subscriptions/'))).toEqual(
      [],
    );
    expect(paths).toEqual(expect.arrayContaining(['/v1/subscriptions', '/v1/capabilities']));
    const alice = await app.freshUser();
    expect((await app.as(alice).get('/v1/subscriptions')).status).toBe(200);
  });
});
