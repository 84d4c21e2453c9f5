import { loadConfig } from '@castlog/config';
import { Body, Controller, Module, Post } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import pino from 'pino';
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

/** POSTs `body` (with its Content-Length, or chunked) as a client that reads the answer only once
 * it has sent the whole request (Python's http.client does, as mygpoclient uses it), and answers
 * the response, or fails with what the client saw instead (a broken pipe, a reset). */
async function post(url: string, path: string, body: string, chunked = false) {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  socket.pause();
  await once(socket, 'connect');
  const write = (data: string) =>
    new Promise<void>((resolve, reject) =>
      socket.write(data, (error) => (error ? reject(error) : resolve())),
    );
  const framing = chunked ? 'transfer-encoding: chunked' : `content-length: ${Buffer.byteLength(body)}`;
  await write(
    `POST ${path} HTTP/1.1\r\nhost: castlog\r\nconnection: close\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`,
  );
  const piece = 256 * 1024;
  for (let at = 0; at < body.length; at += piece) {
    const part = body.slice(at, at + piece);
    await write(chunked ? `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n` : part);
  }
  if (chunked) await write('0\r\n\r\n');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.resume();
  await Promise.race([once(socket, 'end'), once(socket, 'error').then(([error]) => Promise.reject(error))]);
  socket.destroy();
  const [head = '', payload = ''] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), head, body: payload };
}

describe('body limits', () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      callback();
    },
  });
  let app: NestFastifyApplication;
  let url: string;

  beforeAll(async () => {
    app = await createHttpApp(
      UploadModule,
      loadConfig({ BODY_LIMIT_BYTES: '1024' }),
      pino({ level: 'info' }, sink),
    );
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
