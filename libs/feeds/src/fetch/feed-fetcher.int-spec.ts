import type { ServerResponse } from 'node:http';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { closedPort, startTestServer, type Handler, type TestServer } from '../testing/test-server';
import { FeedFetcher, type FetcherOptions, type FetchResult } from './feed-fetcher';

const FEED = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Test</title></channel></rss>',
);
const ETAG = '"feed-v1"';
const LAST_MODIFIED = 'Mon, 07 Dec 2026 06:00:00 GMT';
const MAX_BYTES = 64 * 1024;

const options: FetcherOptions = {
  userAgent: 'castlog/0.1.0 (feed-fetcher spec)',
  timeoutMs: 3_000,
  maxBytes: MAX_BYTES,
  maxRedirects: 3,
  allowPrivate: false,
  allowedRanges: ['127.0.0.1/32'],
};

const fetcher = (overrides: Partial<FetcherOptions> = {}): FeedFetcher =>
  new FeedFetcher({ ...options, ...overrides });

const sendFeed = (response: ServerResponse, headers: Record<string, string> = {}): void => {
  response.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8', ...headers });
  response.end(FEED);
};

const redirect =
  (status: number, location: string): Handler =>
  (_request, response) => {
    response.writeHead(status, { location });
    response.end();
  };

/** Writes chunks without a Content-Length until the client goes away. */
const endless: Handler = (_request, response) => {
  response.writeHead(200, { 'content-type': 'application/rss+xml' });
  const chunk = Buffer.alloc(16 * 1024, 'a');
  const write = (): void => {
    while (!response.destroyed && response.write(chunk));
    if (!response.destroyed) response.once('drain', write);
  };
  write();
};

const routes: Record<string, Handler> = {
  '/feed': (_request, response) => sendFeed(response),
  '/validated': (request, response) => {
    if (request.headers['if-none-match'] === ETAG) {
      response.writeHead(304, { etag: ETAG });
      response.end();
    } else {
      sendFeed(response, { etag: ETAG, 'last-modified': LAST_MODIFIED });
    }
  },
  '/permanent-1': redirect(301, '/permanent-2'),
  '/permanent-2': redirect(308, '/feed'),
  '/temporary': redirect(302, '/feed'),
  '/permanent-then-temporary': redirect(301, '/temporary'),
  '/see-other': redirect(303, '/feed'),
  '/hop-3': redirect(307, '/hop-2'),
  '/hop-2': redirect(307, '/hop-1'),
  '/hop-1': redirect(307, '/feed'),
  '/hop-4': redirect(307, '/hop-3'),
  '/to-file': redirect(302, 'file:///etc/passwd'),
  '/declared-too-large': (_request, response) => {
    response.writeHead(200, { 'content-length': String(MAX_BYTES + 1) });
    response.end(Buffer.alloc(MAX_BYTES + 1, 'a'));
  },
  '/endless': endless,
  '/gzip-bomb': (_request, response) => {
    response.writeHead(200, { 'content-encoding': 'gzip' });
    response.end(gzipSync(Buffer.alloc(MAX_BYTES * 16, 'a')));
  },
  '/unavailable': (_request, response) => {
    response.writeHead(503, { 'retry-after': '120' });
    response.end();
  },
  '/throttled': (_request, response) => {
    response.writeHead(429, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() });
    response.end();
  },
  '/missing': (_request, response) => {
    response.writeHead(404);
    response.end();
  },
  '/corrupt-gzip': (_request, response) => {
    response.writeHead(200, { 'content-encoding': 'gzip' });
    response.end(FEED);
  },
  '/compress': (_request, response) => {
    response.writeHead(200, { 'content-encoding': 'compress' });
    response.end(FEED);
  },
  '/nowhere': (_request, response) => {
    response.writeHead(301);
    response.end();
  },
  '/silent': () => undefined,
  '/stalled-body': (_request, response) => {
    response.writeHead(200, { 'content-length': String(FEED.length) });
    response.write(FEED.subarray(0, 10));
  },
};

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const route = routes[path];
    if (route) return route(request, response);
    response.writeHead(404);
    response.end();
  });
});

afterAll(() => server.close());

/** The requests the shared server received during `action`. */
async function requestsDuring(action: () => Promise<FetchResult>) {
  const before = server.requests.length;
  const result = await action();
  return { result, requests: server.requests.slice(before) };
}

describe('an answer', () => {
  it('200: the body, its type and validators; the options’ User-Agent and an Accept for feeds', async () => {
    const { result, requests } = await requestsDuring(() => fetcher().fetch(server.url('/validated'), {}));

    expect(result).toEqual({
      kind: 'fetched',
      body: FEED,
      contentType: 'application/rss+xml; charset=utf-8',
      etag: ETAG,
      lastModified: LAST_MODIFIED,
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.headers).toMatchObject({
      'user-agent': options.userAgent,
      accept: expect.stringContaining('application/rss+xml'),
      'accept-encoding': expect.stringContaining('gzip'),
    });
    expect(requests[0]!.headers['if-none-match']).toBeUndefined();
  });

  it('304 on a second fetch that sends the first one’s validators', async () => {
    const first = await fetcher().fetch(server.url('/validated'), {});
    if (first.kind !== 'fetched') throw new Error(`first fetch: ${JSON.stringify(first)}`);

    const validators = { etag: first.etag, lastModified: first.lastModified };
    const { result, requests } = await requestsDuring(() =>
      fetcher().fetch(server.url('/validated'), validators),
    );

    expect(result).toEqual({ kind: 'not-modified', etag: ETAG, lastModified: LAST_MODIFIED });
    expect(requests[0]!.headers).toMatchObject({ 'if-none-match': ETAG, 'if-modified-since': LAST_MODIFIED });
  });

  it('a gzip body, decoded', async () => {
    const gzip = await startTestServer((_request, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip' });
      response.end(gzipSync(FEED));
    });
    try {
      const result = await fetcher().fetch(gzip.url('/'), {});
      expect(result).toMatchObject({ kind: 'fetched', body: FEED });
    } finally {
      await gzip.close();
    }
  });

  it.each([
    ['br', 'br', brotliCompressSync],
    ['zlib deflate', 'deflate', deflateSync],
    ['raw deflate', 'deflate', deflateRawSync],
  ])('a %s body, decoded', async (_name, coding, encode) => {
    const encoded = await startTestServer((_request, response) => {
      response.writeHead(200, { 'content-encoding': coding });
      response.end(encode(FEED));
    });
    try {
      expect(await fetcher().fetch(encoded.url('/'), {})).toMatchObject({ kind: 'fetched', body: FEED });
    } finally {
      await encoded.close();
    }
  });

  it('a 404 is an http-error', async () => {
    expect(await fetcher().fetch(server.url('/missing'), {})).toEqual({
      kind: 'failed',
      outcome: 'http-error',
      detail: `${new URL(server.origin).host}: HTTP 404 Not Found`,
    });
  });

  it.each([
    ['/corrupt-gzip', 'the gzip body could not be decoded (incorrect header check)'],
    ['/compress', 'unsupported Content-Encoding "compress"'],
    ['/nowhere', 'HTTP 301 redirect without a Location'],
  ])('%s, a broken answer: http-error', async (path, detail) => {
    expect(await fetcher().fetch(server.url(path), {})).toEqual({
      kind: 'failed',
      outcome: 'http-error',
      detail: `${new URL(server.origin).host}: ${detail}`,
    });
  });

  it('503 with Retry-After in seconds: retryAfterMs', async () => {
    const result = await fetcher().fetch(server.url('/unavailable'), {});
    expect(result).toMatchObject({ kind: 'failed', outcome: 'http-error', retryAfterMs: 120_000 });
    expect(result.kind === 'failed' && result.detail).toMatch(
      /HTTP 503 Service Unavailable, retry after 120 s$/,
    );
  });

  it('429 with Retry-After as an HTTP date: retryAfterMs until then', async () => {
    const result = await fetcher().fetch(server.url('/throttled'), {});
    expect(result).toMatchObject({ kind: 'failed', outcome: 'http-error' });
    const retryAfterMs = result.kind === 'failed' ? result.retryAfterMs : undefined;
    // The date has whole seconds: up to a second less, and the time the fetch took.
    expect(retryAfterMs).toBeGreaterThan(55_000);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000);
  });
});

describe('redirects', () => {
  it('a chain of permanent ones (301, 308): fetched from the end, movedTo set', async () => {
    expect(await fetcher().fetch(server.url('/permanent-1'), {})).toMatchObject({
      kind: 'fetched',
      body: FEED,
      movedTo: server.url('/feed'),
    });
  });

  it('a 302: fetched, movedTo not set', async () => {
    const result = await fetcher().fetch(server.url('/temporary'), {});
    expect(result).toMatchObject({ kind: 'fetched', body: FEED });
    expect(result).not.toHaveProperty('movedTo');
  });

  it('a 301 then a 302: movedTo not set', async () => {
    const result = await fetcher().fetch(server.url('/permanent-then-temporary'), {});
    expect(result).toMatchObject({ kind: 'fetched', body: FEED });
    expect(result).not.toHaveProperty('movedTo');
  });

  it('a 303: followed with a GET', async () => {
    expect(await fetcher().fetch(server.url('/see-other'), {})).toMatchObject({
      kind: 'fetched',
      body: FEED,
    });
  });

  it('as many as maxRedirects are followed', async () => {
    expect(await fetcher().fetch(server.url('/hop-3'), {})).toMatchObject({ kind: 'fetched', body: FEED });
  });

  it('one more than maxRedirects: too-many-redirects, and the last target is not requested', async () => {
    const { result, requests } = await requestsDuring(() => fetcher().fetch(server.url('/hop-4'), {}));
    expect(result).toEqual({
      kind: 'failed',
      outcome: 'too-many-redirects',
      detail: `${new URL(server.origin).host} after 3 redirects: HTTP 307 is one redirect over the limit of 3`,
    });
    expect(requests.map(({ path }) => path)).toEqual(['/hop-4', '/hop-3', '/hop-2', '/hop-1']);
  });

  it('to another scheme: refused', async () => {
    const result = await fetcher().fetch(server.url('/to-file'), {});
    expect(result).toMatchObject({ kind: 'failed', outcome: 'refused' });
    expect(result.kind === 'failed' && result.detail).toContain('"file:"');
  });

  it('credentials and cookies stay with the host they belong to', async () => {
    const other = await startTestServer((_request, response) => sendFeed(response), '127.0.0.2');
    const first = await startTestServer((_request, response) => {
      response.writeHead(302, { location: other.url('/feed'), 'set-cookie': 'session=1' });
      response.end();
    });
    try {
      const url = first.url('/feed').replace('http://', 'http://alice:secret@');
      const result = await fetcher({ allowedRanges: ['127.0.0.1/32', '127.0.0.2/32'] }).fetch(url, {});

      expect(result).toMatchObject({ kind: 'fetched', body: FEED });
      expect(first.requests[0]!.headers.authorization).toBe(`Basic ${btoa('alice:secret')}`);
      expect(other.requests[0]!.headers).not.toHaveProperty('authorization');
      expect(other.requests[0]!.headers).not.toHaveProperty('cookie');
    } finally {
      await Promise.all([first.close(), other.close()]);
    }
  });
});

describe('limits', () => {
  it('a Content-Length over maxBytes: too-large before the body is read', async () => {
    expect(await fetcher().fetch(server.url('/declared-too-large'), {})).toEqual({
      kind: 'failed',
      outcome: 'too-large',
      detail: `${new URL(server.origin).host}: Content-Length ${MAX_BYTES + 1} is over the limit of ${MAX_BYTES} bytes`,
    });
  });

  it('a body without Content-Length that passes maxBytes: too-large as soon as it does', async () => {
    const result = await fetcher().fetch(server.url('/endless'), {});
    expect(result).toMatchObject({ kind: 'failed', outcome: 'too-large' });
    expect(result.kind === 'failed' && result.detail).toContain(`body over the limit of ${MAX_BYTES} bytes`);
  });

  it('a gzip body that passes maxBytes once decoded: too-large', async () => {
    const result = await fetcher().fetch(server.url('/gzip-bomb'), {});
    expect(result).toMatchObject({ kind: 'failed', outcome: 'too-large' });
    expect(result.kind === 'failed' && result.detail).toContain('once gzip-decoded');
  });

  it('a server that never answers: timeout after timeoutMs', async () => {
    const started = Date.now();
    const result = await fetcher({ timeoutMs: 300 }).fetch(server.url('/silent'), {});
    expect(result).toEqual({
      kind: 'failed',
      outcome: 'timeout',
      detail: `${new URL(server.origin).host}: no complete answer within 300 ms`,
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a body that stops halfway: timeout, the limit being for the whole fetch', async () => {
    const result = await fetcher({ timeoutMs: 300 }).fetch(server.url('/stalled-body'), {});
    expect(result).toMatchObject({ kind: 'failed', outcome: 'timeout' });
  });

  it('a port nothing listens on: network-error', async () => {
    const port = await closedPort();
    const result = await fetcher().fetch(`http://127.0.0.1:${port}/feed`, {});
    expect(result).toMatchObject({ kind: 'failed', outcome: 'network-error' });
    expect(result.kind === 'failed' && result.detail).toContain('ECONNREFUSED');
  });
});

describe('addresses', () => {
  it('127.0.0.1 without a setting that allows it: refused, and never connected to', async () => {
    const { result, requests } = await requestsDuring(() =>
      fetcher({ allowedRanges: [] }).fetch(server.url('/feed'), {}),
    );
    const host = new URL(server.origin).host;
    expect(result).toEqual({
      kind: 'failed',
      outcome: 'refused',
      detail: `${host}: 127.0.0.1 is in a special-purpose range (loopback, 127.0.0.0/8) that is not allowed`,
    });
    expect(requests).toHaveLength(0);
  });

  it('127.0.0.1 with allowedRanges 127.0.0.1/32, or with allowPrivate: fetched', async () => {
    const allowed = fetcher({ allowedRanges: ['127.0.0.1/32'] });
    const privateAllowed = fetcher({ allowedRanges: [], allowPrivate: true });
    expect(await allowed.fetch(server.url('/feed'), {})).toMatchObject({ kind: 'fetched', body: FEED });
    expect(await privateAllowed.fetch(server.url('/feed'), {})).toMatchObject({
      kind: 'fetched',
      body: FEED,
    });
  });

  it('a name is checked after DNS: localhost refused, and fetched when its address is allowed', async () => {
    const byName = server.url('/feed').replace('127.0.0.1', 'localhost');
    const refused = await fetcher({ allowedRanges: [] }).fetch(byName, {});
    expect(refused).toMatchObject({ kind: 'failed', outcome: 'refused' });
    expect(refused.kind === 'failed' && refused.detail).toContain('the name resolves to 127.0.0.1');
    expect(await fetcher().fetch(byName, {})).toMatchObject({ kind: 'fetched', body: FEED });
  });

  it('a redirect from an allowed 127.0.0.2 to 127.0.0.1, with only 127.0.0.2/32 allowed: refused', async () => {
    const allowed = await startTestServer(redirect(301, server.url('/feed')), '127.0.0.2');
    try {
      const { result, requests } = await requestsDuring(() =>
        fetcher({ allowedRanges: ['127.0.0.2/32'] }).fetch(allowed.url('/feed'), {}),
      );
      expect(allowed.requests).toHaveLength(1);
      expect(result).toEqual({
        kind: 'failed',
        outcome: 'refused',
        detail: `${new URL(server.origin).host} after 1 redirect: 127.0.0.1 is in a special-purpose range (loopback, 127.0.0.0/8) that is not allowed`,
      });
      expect(requests).toHaveLength(0);
    } finally {
      await allowed.close();
    }
  });

  it.each(['ftp://127.0.0.1/feed', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url'])(
    '%s: refused',
    async (url) => {
      expect(await fetcher({ allowPrivate: true }).fetch(url, {})).toMatchObject({
        kind: 'failed',
        outcome: 'refused',
      });
    },
  );

  it.each(['http://[::1]/feed', 'http://[::ffff:127.0.0.1]/feed', 'http://[::]/feed', 'http://0.0.0.0/feed'])(
    '%s: refused',
    async (url) => {
      const result = await fetcher({ allowedRanges: [] }).fetch(url, {});
      expect(result).toMatchObject({ kind: 'failed', outcome: 'refused' });
    },
  );
});
