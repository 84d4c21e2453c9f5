import { CastlogUnderTest, startCastlog, startProjector, TestUser } from '../support/start-castlog';
import { UPLOAD_BODY_LIMIT_BYTES } from '@castlog/config';
import { capturedLogger } from '../support/captured-log';
import { errorBody, feed, VALIDATION } from '../support/contract';
import { sendThenRead } from '../support/send-then-read';

describe('Errors', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  it('answers an unknown route with 404 and the error body', async () => {
    for (const path of ['/nope', '/v1/nothing', '/v2/subscriptions']) {
      const response = await app.as(alice).get(path);
      expect(response.status).toBe(404);
      expect(response.body).toEqual(errorBody(404, 'Resource not found'));
    }
    const wrongMethod = await app.as(alice).request('PUT', '/v1/subscriptions');
    expect(wrongMethod.status).toBe(404);
    expect(wrongMethod.body).toEqual(errorBody(404, 'Resource not found'));
  });

  it('answers an unknown route with 404 whatever its body, which the framework reads first', async () => {
    for (const [method, path, rawBody, contentType] of [
      ['POST', '/nope', '{"subscriptions": [', 'application/json'],
      ['PUT', `/subscriptions/${alice.name}/phone`, '[]garbage', 'application/json'],
      ['PATCH', '/v1/nothing', '<feeds/>', 'application/xml'],
      ['POST', '/v2/subscriptions', '', 'application/json'],
    ]) {
      const response = await app.as(alice).request(method, path, {
        rawBody,
        headers: { 'content-type': contentType },
      });
      expect({ path, status: response.status, body: response.body }).toEqual({
        path,
        status: 404,
        body: errorBody(404, 'Resource not found'),
      });
    }
  });

  it("answers a path that does not percent-decode as its route would: 404 under no route, else its route's invalid input", async () => {
    for (const [path, status] of [
      ['/%zz', 404],
      ['/v1/%zz', 404],
      ['/v1/subscriptions%zz', 404],
      ['/api/2/%zz.json', 404],
      ['/v1/subscriptions/%zz', 405],
      ['/v1/deletions/%E0%A4%A', 405],
      [`/api/2/subscriptions/${alice.name}/%zz.json`, 400],
    ] as const) {
      const response = await app.as(alice).get(path);
      expect({ path, status: response.status, code: response.body.code }).toEqual({
        path,
        status,
        code: String(status),
      });
    }
  });

  it('answers a route whose path parameter is empty as an unknown route: 404, whatever its body', async () => {
    for (const [method, path, contentType] of [
      ['GET', '/v1/subscriptions/', undefined],
      ['PATCH', '/v1/subscriptions/', 'application/json'],
      ['PATCH', '/v1/subscriptions/', '*/*'],
      ['DELETE', '/v1/subscriptions/', 'application/xml'],
      ['GET', '/v1/deletions/', undefined],
      ['POST', `/api/2/subscriptions/${alice.name}/.json`, 'application/json'],
      ['PUT', `/subscriptions/${alice.name}/.txt`, '*/*'],
    ] as const) {
      const response = await app.as(alice).request(method, path, {
        ...(contentType ? { rawBody: 'null', headers: { 'content-type': contentType } } : {}),
      });
      expect({ method, path, contentType, status: response.status, body: response.body }).toEqual({
        method,
        path,
        contentType,
        status: 404,
        body: errorBody(404, 'Resource not found'),
      });
    }
  });

  it('answers malformed JSON and non-JSON bodies with 405, never a stack trace', async () => {
    for (const [rawBody, contentType] of [
      ['{"subscriptions": [', 'application/json'],
      ['subscriptions=1', 'application/x-www-form-urlencoded'],
      ['plain', 'text/plain'],
    ]) {
      const response = await app.as(alice).request('POST', '/v1/subscriptions', {
        rawBody,
        headers: { 'content-type': contentType },
      });
      expect(response.status).toBe(405);
      expect(response.body).toEqual(VALIDATION());
      expect(response.text).not.toMatch(/at .*\.(js|ts):\d+/);
    }
  });

  it('refuses a JSON body that is not UTF-8 with 405 rather than storing replacement characters', async () => {
    const latin1 = Buffer.from('{"subscriptions":[{"feed_url":"https://l.example/\u00e9"}]}', 'latin1');
    const response = await app.as(alice).request('POST', '/v1/subscriptions', { rawBody: latin1 });
    expect(response.status).toBe(405);
    expect(response.body).toEqual(
      VALIDATION('the text is not UTF-8 (an XML document in another encoding must declare it)'),
    );
    expect((await app.as(alice).get('/v1/subscriptions')).body.total).toBe(0);
    const utf8 = Buffer.from('\ufeff{"subscriptions":[{"feed_url":"https://l.example/\u00e9"}]}', 'utf8');
    const added = await app.as(alice).request('POST', '/v1/subscriptions', { rawBody: utf8 });
    expect(added.status).toBe(200);
    expect(added.body.success[0].feed_url).toBe('https://l.example/\u00e9');
  });

  it('reads no body but JSON: a form-encoded PATCH or login is 405, whatever fields it carries', async () => {
    const feedUrl = feed('form-encoded');
    const { body: added } = await app
      .as(alice)
      .post('/v1/subscriptions', { subscriptions: [{ feed_url: feedUrl }] });
    const { guid } = added.success[0] as { guid: string };
    const patched = await app.as(alice).request('PATCH', `/v1/subscriptions/${guid}`, {
      rawBody: `new_feed_url=${encodeURIComponent(feed('form-encoded-2'))}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect({ status: patched.status, body: patched.body }).toEqual({ status: 405, body: VALIDATION() });
    expect((await app.as(alice).get(`/v1/subscriptions/${guid}`)).body.feed_url).toBe(feedUrl);
    const login = await app.anonymous.request('POST', '/v1/auth/login', {
      rawBody: `username=${alice.name}&password=${encodeURIComponent(alice.password)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect({ status: login.status, body: login.body }).toEqual({ status: 405, body: VALIDATION() });
  });

  it('reads no body on a DELETE: one labelled JSON but empty is 202 like one without a label', async () => {
    const { body: added } = await app.as(alice).post('/v1/subscriptions', {
      subscriptions: [{ feed_url: feed('delete-labelled') }],
    });
    const { guid } = added.success[0] as { guid: string };
    const deleted = await app.as(alice).request('DELETE', `/v1/subscriptions/${guid}`, {
      headers: { 'content-type': 'application/json' },
    });
    expect(deleted.status).toBe(202);
    expect(deleted.body).toEqual({ deletion_id: expect.any(Number), message: expect.any(String) });
  });

  it('documents in /openapi.json the 401, 429 and 503 of every authenticated operation, and bearer tokens as opaque', async () => {
    const document = (await (await fetch(new URL('/openapi.json', app.url))).json()) as {
      paths: Record<string, Record<string, { security?: object[]; responses: Record<string, unknown> }>>;
      components: { securitySchemes: Record<string, { bearerFormat?: string }> };
    };
    // An operation whose security lists `{}` needs no credentials (gpodder.net's logout).
    const needsCredentials = (security: object[] = []) =>
      security.length > 0 && security.every((requirement) => Object.keys(requirement).length > 0);
    const authenticated = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => needsCredentials(operation.security))
        .map(([method, operation]) => [`${method} ${path}`, Object.keys(operation.responses)] as const),
    );
    expect(authenticated.length).toBeGreaterThanOrEqual(6);
    for (const [operation, statuses] of authenticated)
      expect([operation, statuses]).toEqual([operation, expect.arrayContaining(['401', '429', '503'])]);
    expect(document.components.securitySchemes.bearer).toEqual(
      expect.objectContaining({ scheme: 'bearer', bearerFormat: 'opaque' }),
    );
  });

  it('sends the error body as JSON with the code as a string', async () => {
    const response = await app.as(alice).get('/v1/subscriptions/not-a-guid');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(typeof response.body.code).toBe('string');
  });
});

describe('Limits', () => {
  it('refuses a body over 1 MiB with 413 and the error body', async () => {
    const app = await startCastlog({ log: 'postgres' });
    try {
      const alice = await app.freshUser();
      const big = { subscriptions: [{ feed_url: `https://example.com/${'x'.repeat(1024 * 1024)}` }] };
      const response = await app.as(alice).post('/v1/subscriptions', big);
      expect(response.status).toBe(413);
      expect(response.body).toEqual(errorBody(413));
    } finally {
      await app.close();
    }
  });

  it('lets a client that sends a gpodder.net upload over its 4 MiB limit read the 413, and logs why', async () => {
    const { lines, logger } = capturedLogger('warn');
    const app = await startCastlog({ log: 'postgres', logger });
    try {
      const alice = await app.freshUser();
      const action = {
        podcast: 'https://a.example.com/rss',
        episode: 'https://a.example.com/1.mp3',
        action: 'new',
      };
      const body = JSON.stringify(
        Array.from({ length: 9_000 }, () => ({ ...action, guid: 'g'.repeat(500) })),
      );
      expect(body.length).toBeGreaterThan(UPLOAD_BODY_LIMIT_BYTES);
      // Sent whole before the answer is read, as Python's http.client sends it: no broken pipe.
      const answer = await sendThenRead(app.url, {
        method: 'POST',
        path: `/api/2/episodes/${alice.name}.json`,
        body,
        headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toEqual(errorBody(413));
      expect(lines.filter((line) => String(line.msg).startsWith('answered 413'))).toEqual([
        expect.objectContaining({
          level: 40,
          limit: UPLOAD_BODY_LIMIT_BYTES,
          contentLength: String(body.length),
          msg: expect.stringMatching(
            new RegExp(
              `^answered 413: the request body is larger than this route's limit of ${UPLOAD_BODY_LIMIT_BYTES} bytes; ` +
                'the rest of it \\(\\d+ bytes\\) read and discarded before answering$',
            ),
          ),
        }),
      ]);
    } finally {
      await app.close();
    }
  });

  it('limits each user per minute with 429, Retry-After and the error body, without touching other users', async () => {
    const app = await startCastlog({ log: 'postgres', env: { RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const [alice, bob] = [await app.freshUser(), await app.freshUser()];
      const statuses = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await app.as(alice).get('/v1/subscriptions')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const limited = await app.as(alice).get('/v1/subscriptions');
      expect(limited.body).toEqual(errorBody(429));
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await app.as(bob).get('/v1/subscriptions')).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('counts failed credentials per client address: past the limit 429 before checking, even right ones', async () => {
    const app = await startCastlog({ log: 'postgres', env: { RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const alice = await app.freshUser();
      const basic = (password: string) =>
        app.anonymous.withAuthorization(
          `Basic ${Buffer.from(`${alice.name}:${password}`).toString('base64')}`,
        );
      // Without credentials nothing is counted.
      for (let i = 0; i < 4; i += 1) expect((await app.anonymous.get('/v1/subscriptions')).status).toBe(401);
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await basic('wrong').get('/v1/subscriptions')).status);
      statuses.push(
        (await app.as(alice).withAuthorization('Bearer not-a-token').get('/v1/subscriptions')).status,
      );
      expect(statuses).toEqual([401, 401, 401, 429]);
      const limited = await basic(alice.password).get('/v1/subscriptions');
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual(errorBody(429));
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await app.close();
    }
  });

  it('answers 503 with Retry-After when the projection does not catch up in time, and the write still applies', async () => {
    const app = await startCastlog({ projector: false, env: { READ_YOUR_WRITES_TIMEOUT: '300ms' } });
    try {
      const alice = await app.freshUser();
      const url = feed();
      const response = await app.as(alice).post('/v1/subscriptions', { subscriptions: [{ feed_url: url }] });
      expect(response.status).toBe(503);
      expect(response.body).toEqual(errorBody(503));
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const projector = await startProjector(app.config);
      try {
        const listed = await app.until('the write applies', async () => {
          const list = await app.as(alice).get('/v1/subscriptions');
          return list.body.total === 1 ? list.body.subscriptions[0] : undefined;
        });
        expect(listed.feed_url).toBe(url);
      } finally {
        await projector.close();
      }
    } finally {
      await app.close();
    }
  });
});
