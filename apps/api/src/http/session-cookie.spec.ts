import fastifyCookie from '@fastify/cookie';
import Fastify, { FastifyInstance } from 'fastify';
import { get } from 'node:http';
import {
  clearSessionCookie,
  readSessionCookie,
  setBrowserSessionCookie,
  setSessionCookie,
} from './session-cookie';

/** A Fastify instance with @fastify/cookie registered, as the API's: `GET /read` answers the session
 * cookie it reads, `GET /set` and `GET /clear` set or clear it. */
async function server(now: Date, expiresAt: Date): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(fastifyCookie);
  app.get('/read', async (request) => ({ value: readSessionCookie(request) ?? null }));
  app.get<{ Querystring: { secure?: string } }>('/set', async (request, reply) => {
    setSessionCookie(reply, 'cl_token', expiresAt, now, request.query.secure === '1');
    return {};
  });
  app.get<{ Querystring: { secure?: string } }>('/set-for-browser-session', async (request, reply) => {
    setBrowserSessionCookie(reply, 'castlog_form', 'tok', request.query.secure === '1');
    return {};
  });
  app.get('/clear', async (_request, reply) => {
    clearSessionCookie(reply, false);
    return {};
  });
  await app.ready();
  return app;
}

const now = new Date('2024-11-23T10:00:00.000Z');
const expiresAt = new Date('2024-12-07T10:00:00.900Z');
let app: FastifyInstance;
beforeAll(async () => (app = await server(now, expiresAt)));
afterAll(() => app.close());

describe('readSessionCookie', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['sessionid=abc', 'abc'],
    ['a=1; sessionid=abc; b=2', 'abc'],
    ['a=1;sessionid = abc ;b=2', 'abc'],
    ['sessionid="abc"', 'abc'],
    ['sessionid=', null],
    ['xsessionid=abc; sessionidx=def', null],
    ['sessionid=first; sessionid=second', 'first'],
    ['flag; sessionid=abc=def', 'abc=def'],
  ])('reads %j as %j', async (header, value) => {
    const response = await app.inject({
      url: '/read',
      headers: header === undefined ? {} : { cookie: header },
    });
    expect(response.json()).toEqual({ value });
  });

  it('reads Cookie headers sent twice as one, as Node joins them', async () => {
    const port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port);
    const body = await new Promise<string>((resolve, reject) => {
      const request = get(
        { host: '127.0.0.1', port, path: '/read', headers: { cookie: ['a=1', 'sessionid=abc'] } },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve(text));
        },
      );
      request.on('error', reject);
    });
    expect(JSON.parse(body)).toEqual({ value: 'abc' });
  });
});

describe('setSessionCookie', () => {
  it('is HttpOnly on Path=/ with SameSite=Lax, lasting until the session expires', async () => {
    expect((await app.inject({ url: '/set' })).headers['set-cookie']).toBe(
      'sessionid=cl_token; Max-Age=1209600; Path=/; Expires=Sat, 07 Dec 2024 10:00:00 GMT; HttpOnly; SameSite=Lax',
    );
  });

  it('is Secure over HTTPS', async () => {
    expect((await app.inject({ url: '/set?secure=1' })).headers['set-cookie']).toMatch(
      /; HttpOnly; Secure; SameSite=Lax$/,
    );
  });
});

describe('setBrowserSessionCookie', () => {
  it('has the same attributes and no expiry, Secure when asked', async () => {
    expect((await app.inject({ url: '/set-for-browser-session' })).headers['set-cookie']).toBe(
      'castlog_form=tok; Path=/; HttpOnly; SameSite=Lax',
    );
    expect((await app.inject({ url: '/set-for-browser-session?secure=1' })).headers['set-cookie']).toBe(
      'castlog_form=tok; Path=/; HttpOnly; Secure; SameSite=Lax',
    );
  });
});

describe('clearSessionCookie', () => {
  it('clears the cookie with an empty value that has already expired', async () => {
    expect((await app.inject({ url: '/clear' })).headers['set-cookie']).toBe(
      'sessionid=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
    );
  });
});
