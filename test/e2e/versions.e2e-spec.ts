import { errorBody } from '../support/contract';
import { CastlogUnderTest, startCastlog } from '../support/start-castlog';

describe('GET /v1/versions and /v1/capabilities', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres' })));
  afterAll(() => app?.close());

  it('answers the supported versions, one per major at its highest minor, without credentials', async () => {
    const response = await app.anonymous.get('/v1/versions');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ versions: ['v1.0'] });
  });

  it('answers the enabled optional features, without credentials: none of them yet', async () => {
    const response = await app.anonymous.get('/v1/capabilities');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ capabilities: {} });
  });

  it('answers 404 with the error body for a major version it does not serve', async () => {
    const response = await app.anonymous.get('/v2/capabilities');
    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody(404, 'Resource not found'));
  });
});
