import { loadConfig } from '@castlog/config';
import { Body, Controller, Module, Post } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { capturedLogger } from '../../../test/support/captured-log';
import { sendThenRead } from '../../../test/support/send-then-read';
import { discardBody } from './body-limit';
import { createHttpApp } from './create-http-app';
import { RequestMetrics } from './request-metrics';
import { CastlogRoute } from './route-options';

@Controller()
class UploadController {
  @Post('small')
  small(@Body() body: unknown) {
    return { received: JSON.stringify(body).length };
  }

  @Post('upload')
  @CastlogRoute({ bodyLimit: 64 * 1024 })
  upload(@Body() body: unknown) {
    return { received: JSON.stringify(body).length };
  }
}

@Module({
  controllers: [UploadController],
  providers: [{ provide: RequestMetrics, useValue: { observeRequest: () => undefined } }],
})
class UploadModule {}

/** A JSON body of about `bytes` bytes. */
const jsonOf = (bytes: number) => JSON.stringify({ data: 'x'.repeat(bytes) });

/** POSTs a JSON body as a client that reads the answer only once it has sent the whole request. */
const post = (url: string, path: string, body: string, chunked = false) =>
  sendThenRead(url, { method: 'POST', path, body, chunked, headers: { 'content-type': 'application/json' } });

describe('body limits', () => {
  const { lines, logger } = capturedLogger();
  let app: NestFastifyApplication;
  let url: string;

  beforeAll(async () => {
    app = await createHttpApp(UploadModule, loadConfig({ BODY_LIMIT_BYTES: '1024' }), logger);
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = await app.getUrl();
  });
  afterAll(() => app?.close());

  it('gives a route its own limit where it asks for more than BODY_LIMIT_BYTES', async () => {
    expect((await post(url, '/upload', jsonOf(60 * 1024))).status).toBe(201);
    expect((await post(url, '/small', jsonOf(2 * 1024))).status).toBe(413);
  });

  it.each([
    ['with its Content-Length', false],
    ['chunked', true],
  ])(
    'reads a body far over the limit sent %s, then answers 413 with the error body and logs why',
    async (_how, chunked) => {
      lines.length = 0;
      const answer = await post(url, '/upload', jsonOf(8 * 1024 * 1024), chunked);
      expect(answer.status).toBe(413);
      expect(answer.head).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(answer.body)).toEqual({ code: '413', message: 'Request body too large' });
      const logged = lines.filter((line) => String(line.msg).startsWith('answered 413'));
      expect(logged).toEqual([
        expect.objectContaining({
          level: 40,
          limit: 64 * 1024,
          bodyRead: true,
          msg: expect.stringMatching(
            /^answered 413: the request body is larger than this route's limit of 65536 bytes; the rest of it \(\d+ bytes\) read and discarded before answering$/,
          ),
        }),
      ]);
    },
  );
});

describe('discardBody', () => {
  const body = () => Object.assign(new PassThrough(), { complete: false }) as unknown as IncomingMessage;

  it('reads to the end of the body, counting what it throws away', async () => {
    const stream = body();
    const discarded = discardBody(stream, 100, 60_000);
    (stream as unknown as PassThrough).end(Buffer.alloc(40));
    expect(await discarded).toEqual({ discardedBytes: 40, bodyRead: true });
  });

  it('stops past its bound in bytes or in time, the body unread', async () => {
    const long = body();
    const discarded = discardBody(long, 100, 60_000);
    (long as unknown as PassThrough).write(Buffer.alloc(101));
    expect(await discarded).toEqual({ discardedBytes: 101, bodyRead: false });
    // A client that stops sending: the bound in time ends the wait.
    expect(await discardBody(body(), 100, 1)).toEqual({ discardedBytes: 0, bodyRead: false });
  });
});
