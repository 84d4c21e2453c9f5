import { loadConfig } from '@castlog/config';
import { Metrics } from '@castlog/runtime';
import { DependencyHealth } from '@castlog/supervision';
import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { connect } from 'node:net';
import { createHttpApp } from './create-http-app';

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

  @Post('slow')
  async slowWrite(@Body() body: unknown) {
    entered();
    await new Promise<void>((resolve) => (release = resolve));
    return { done: body };
  }
}

@Module({
  controllers: [SlowController],
  providers: [{ provide: Metrics, useFactory: () => new Metrics(new DependencyHealth()) }],
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
    const closing = app.close();
    // Kept alive behind the request in flight, as a pipelining client sends it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.write('GET /slow HTTP/1.1\r\nHost: castlog\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
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
    try {
      const inFlight = new Promise<void>((resolve) => (entered = resolve));
      const started = Date.now();
      const stuck = fastify.inject({ method: 'GET', url: '/slow' });
      await inFlight;
      const answer = await stuck;
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
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
        message: 'Service unavailable, retry later: no answer within 300 ms',
      });
    } finally {
      release();
      await app.close();
    }
  });
});
