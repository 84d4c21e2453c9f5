import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';
import { errorBody, feed } from '../support/contract';

describe('Operations: /health/live, /health/ready, /metrics', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  it('is live and ready without credentials', async () => {
    expect((await app.anonymous.get('/health/live')).body).toEqual({ status: 'ok' });
    const ready = await app.anonymous.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', projection_version: 1, projection_lag: 0 });
  });

  it('exposes Prometheus metrics for HTTP, appends, read-your-writes, batches, lag and deletions', async () => {
    const created = await app.as(alice).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed() }] });
    await app.as(alice).delete(`/v1/subscriptions/${created.body.success[0].guid}`);
    const response = await app.anonymous.get('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    // The deletion saga appends its result after the DELETE has answered: once that has applied too,
    // every partition's lag is 0.
    const text = await app.until(
      'every partition of the projection at lag 0',
      async () => {
        const scraped: string = (await app.anonymous.get('/metrics')).text;
        const lags = [
          ...scraped.matchAll(/^castlog_projector_lag_events\{version="1",partition="\d+"\} (\d+)$/gm),
        ];
        return lags.length === 3 && lags.every(([, lag]) => lag === '0') && scraped;
      },
      30_000,
    );
    expect(text).toMatch(
      /castlog_http_request_duration_seconds_bucket\{.*route="\/v1\/subscriptions".*status="200"/,
    );
    expect(text).toMatch(/castlog_event_append_duration_seconds_count [1-9]/);
    expect(text).toMatch(/castlog_read_your_writes_wait_seconds_count\{result="applied"\} [1-9]/);
    expect(text).toMatch(/castlog_projector_batch_size_count [1-9]/);
    expect(text).toMatch(/castlog_deletions\{status="(PENDING|SUCCESS)"\} 1/);
  });
});

describe('Operations: readiness follows the projection', () => {
  it('answers 503 with the error body while the projection lags past the bound', async () => {
    const app = await startCastlog({
      projector: false,
      env: { READY_MAX_PROJECTION_LAG: '0', READ_YOUR_WRITES_TIMEOUT: '100ms' },
    });
    try {
      const alice = await app.freshUser();
      expect((await app.anonymous.get('/health/ready')).status).toBe(200);
      await app.as(alice).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed() }] });
      const ready = await app.anonymous.get('/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual(
        errorBody(503, 'Service unavailable, retry later: projection is 1 events behind'),
      );
      expect(ready.headers.get('retry-after')).toBeTruthy();
    } finally {
      await app.close();
    }
  });
});
