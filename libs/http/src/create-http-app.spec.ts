import { loadConfig } from '@castlog/config';
import { Body, Controller, Get, Module, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { connect } from 'node:net';
import { capturedLogger } from '../../../test/support/captured-log';
import { createHttpApp } from './create-http-app';
import { Unavailable } from './errors';
import { RequestMetrics } from './request-metrics';
import { poll } from '../../../test/support/until';

/** Lets every callback already due run: what I/O and promises settle without any timer firing. */
const settled = async () => {
  for (let turn = 0; turn < 10; turn += 1) await new Promise((resolve) => setImmediate(resolve));
};

/** A route that answers when the test lets it. */
let entered: () => void = () => undefined;
let release: () => void = () => undefined;

@Controller()
class SlowController {
  @Get('slow')
  async slow() {
    entered();
    await new Promise<void>((resolve) => (release = resolve));
    return { done: true };
  }

  @Get('down')
  down() {
    throw new Unavailable(1, 'a test outage');
  }

  /** A header Node cannot write (a CR LF in a value, as a redirect to a user's text could hold). */
  @Get('unwritable-header')
  unwritableHeader(@Res() reply: FastifyReply) {
    void reply.code(303).header('location', '/web\r\nset-cookie: a=b').send();
  }

  @Post('echo')
  echo(@Body() body: unknown) {
    return body;
  }

  @Post('slow')
  async slowWrite(@Body() body: unknown) {
    entered();
    await new Promise<void>((resolve) => (release = resolve));
    return { done: body };
  }
}

@Module({
  controllers: [SlowController],
  providers: [{ provide: RequestMetrics, useValue: { observeRequest: () => undefined } }],
})
class SlowModule {}

describe('createHttpApp', () => {
  it('answers a request that comes while it drains with 503, Retry-After and the error body', async () => {
    const app = await createHttpApp(SlowModule, loadConfig({ RETRY_AFTER_SECONDS: '4' }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(await app.getUrl()).port);
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const inFlight = new Promise<void>((resolve) => (entered = resolve));
    socket.write('GET /slow HTTP/1.1\r\nHost: castlog\r\n\r\n');
    await inFlight;
    const server = app.getHttpAdapter().getInstance().server;
    const closing = app.close();
    // Fastify stops listening once the app's pre-close hooks have run: the app drains from then on.
    await poll('the app to drain', () => !server.listening, { timeoutMs: 10_000, everyMs: 5 });
    // Kept alive behind the request in flight, as a pipelining client sends it.
    const arrived = new Promise((resolve) => server.once('request', resolve));
    socket.write('GET /slow HTTP/1.1\r\nHost: castlog\r\n\r\n');
    await arrived;
    release();
    await Promise.all([closing, ended]);
    const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(first).toMatch(/\{"done":true\}$/);
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(second).toMatch(/\r\nretry-after: 4\r\n/i);
    expect(second).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    expect(second?.split('\r\n\r\n')[1]).toBe(
      '{"code":"503","message":"Service unavailable, retry later: shutting down"}',
    );
  });

  it('answers a request still unanswered after REQUEST_TIMEOUT with 503 and Retry-After, and serves on', async () => {
    const app = await createHttpApp(
      SlowModule,
      loadConfig({ RETRY_AFTER_SECONDS: '2', REQUEST_TIMEOUT: '300ms' }),
    );
    await app.init();
    const fastify = app.getHttpAdapter().getInstance();
    // The deadline's timer on a clock the test moves; I/O and Date stay real.
    jest.useFakeTimers({
      doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask', 'Date'],
    });
    try {
      const inFlight = new Promise<void>((resolve) => (entered = resolve));
      let answered = false;
      const stuck = fastify.inject({ method: 'GET', url: '/slow' }).finally(() => (answered = true));
      await inFlight;
      jest.advanceTimersByTime(299);
      await settled();
      expect(answered).toBe(false);
      jest.advanceTimersByTime(1);
      const answer = await stuck;
      expect(answer.statusCode).toBe(503);
      expect(answer.headers['retry-after']).toBe('2');
      expect(answer.headers.connection).toBe('close');
      expect(answer.json()).toEqual({
        code: '503',
        message: 'Service unavailable, retry later: no answer within 300 ms',
      });
      // The handler ending late changes nothing; the next request is answered as usual.
      release();
      const next = fastify.inject({ method: 'GET', url: '/slow' });
      await new Promise<void>((resolve) => (entered = resolve));
      release();
      expect((await next).json()).toEqual({ done: true });
    } finally {
      jest.useRealTimers();
      await app.close();
    }
  });

  it("logs a handler's answer after the deadline as one info line, not Fastify's warning with a stack", async () => {
    const { lines, lineWhere, logger } = capturedLogger();
    const app = await createHttpApp(SlowModule, loadConfig({ REQUEST_TIMEOUT: '300ms' }), logger);
    await app.init();
    const fastify = app.getHttpAdapter().getInstance();
    try {
      const inFlight = new Promise<void>((resolve) => (entered = resolve));
      const stuck = fastify.inject({ method: 'GET', url: '/slow' });
      await inFlight;
      expect((await stuck).statusCode).toBe(503);
      release();
      const dropped = await lineWhere(
        (line) => line.msg === 'late answer dropped: the request was answered 503 at its deadline',
      );
      expect(dropped).toEqual(expect.objectContaining({ level: 30, timeoutMs: 300 }));
      expect(lines.filter((line) => JSON.stringify(line).includes('FST_ERR_REP_ALREADY_SENT'))).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('logs a 503 as one warning line that carries the request id', async () => {
    const { lines, logger } = capturedLogger();
    const app = await createHttpApp(SlowModule, loadConfig({}), logger);
    await app.init();
    try {
      const answer = await app
        .getHttpAdapter()
        .getInstance()
        .inject({ method: 'GET', url: '/down', headers: { 'x-request-id': 'req-503' } });
      expect(answer.statusCode).toBe(503);
      const warned = lines.filter((line) => line.level === 40);
      expect(warned).toEqual([
        expect.objectContaining({
          reqId: 'req-503',
          msg: 'answered 503: Service unavailable, retry later: a test outage',
        }),
      ]);
    } finally {
      await app.close();
    }
  });

  it('reads a JSON body with a constructor.prototype key as data, and refuses a __proto__ key by name', async () => {
    const app = await createHttpApp(SlowModule, loadConfig({}));
    await app.init();
    const fastify = app.getHttpAdapter().getInstance();
    const post = (payload: string) =>
      fastify.inject({
        method: 'POST',
        url: '/echo',
        headers: { 'content-type': 'application/json' },
        payload,
      });
    try {
      const constructor = await post('{"a":1,"constructor":{"prototype":"x"}}');
      expect(constructor.statusCode).toBe(201);
      expect(constructor.json()).toEqual({ a: 1, constructor: { prototype: 'x' } });
      const proto = await post('{"a":{"__proto__":{"polluted":true}}}');
      expect(proto.statusCode).toBe(405);
      expect(proto.json().message).toMatch(/the body must not hold a __proto__ key$/);
      const malformed = await post('{"a":');
      expect(malformed.statusCode).toBe(405);
      expect(malformed.json().message).toMatch(/not valid JSON/);
    } finally {
      await app.close();
    }
  });

  it('answers a request with a body, read in full, still unanswered after REQUEST_TIMEOUT with 503', async () => {
    const app = await createHttpApp(
      SlowModule,
      loadConfig({ RETRY_AFTER_SECONDS: '2', REQUEST_TIMEOUT: '300ms' }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const inFlight = new Promise<void>((resolve) => (entered = resolve));
      const stuck = fetch(`${await app.getUrl()}/slow`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ feed_url: 'https://a.example/' }),
        signal: AbortSignal.timeout(5_000),
      });
      await inFlight;
      const answer = await stuck;
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('2');
      expect(await answer.json()).toEqual({
        code: '503',
        message: 'Service unavailable, retry later: no answer within 300 ms; a write may still apply',
      });
    } finally {
      release();
      await app.close();
    }
  });

  it('answers 500 with the error body when an answer carries a header Node cannot write, and serves on', async () => {
    const { logger, lines } = capturedLogger();
    const app = await createHttpApp(SlowModule, loadConfig({}), logger);
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const answer = await fetch(`${await app.getUrl()}/unwritable-header`, {
        redirect: 'manual',
        signal: AbortSignal.timeout(5_000),
      });
      expect(answer.status).toBe(500);
      expect(answer.headers.get('location')).toBeNull();
      expect(answer.headers.get('set-cookie')).toBeNull();
      expect(await answer.json()).toEqual({ code: '500', message: 'Internal server error' });
      expect(JSON.stringify(lines)).toMatch(/location/);
      const next = await fetch(`${await app.getUrl()}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
        signal: AbortSignal.timeout(5_000),
      });
      expect(await next.json()).toEqual({ a: 1 });
    } finally {
      await app.close();
    }
  });
});
