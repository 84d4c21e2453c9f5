import { loadConfig } from '@castlog/config';
import { DependencyHealth } from '@castlog/supervision';
import { Controller, Get, Module, OnApplicationBootstrap } from '@nestjs/common';
import { createServer } from 'node:net';
import { createHttpApp, RequestMetrics } from '@castlog/http';
import { Metrics } from './operations';
import { listenBehindStandIn, openWhenReachable } from './serve';

/** What pg throws when PostgreSQL refuses the connection. */
const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

const opened = () => {
  const value = { closed: false, close: async () => void (value.closed = true) };
  return value;
};

const answer = async (url: string, init?: RequestInit) => {
  const response = await fetch(url, init);
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: await response.json(),
  };
};

/** Whether something still listens on the port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(true));
    probe.listen({ host: '127.0.0.1', port }, () => probe.close(() => resolve(false)));
  });

/** The stand-in's address, from the log line that announces it. */
const standInUrl = (logged: readonly string[]) =>
  /answering 503 on (http:\/\/\S+) until it is back/.exec(logged[0] ?? '')?.[1] ?? '';
const standInPort = (logged: readonly string[]) => Number(new URL(standInUrl(logged)).port);

const options = (signal = new AbortController().signal) => {
  const logged: string[] = [];
  return {
    logged,
    host: '127.0.0.1',
    port: 0,
    retryAfterSeconds: 7,
    signal,
    log: (message: string) => void logged.push(message),
    initialMs: 1,
    maxMs: 2,
  };
};

describe('openWhenReachable', () => {
  it('answers what opened at once, with no stand-in', async () => {
    const value = opened();
    const given = options();
    expect(await openWhenReachable(async () => value, given)).toEqual({ opened: value, standIn: undefined });
    expect(given.logged).toEqual([]);
  });

  it('while a dependency is out of reach, retries and answers 503 with Retry-After on the port meanwhile', async () => {
    const value = opened();
    const given = options();
    const seen: unknown[] = [];
    let calls = 0;
    const result = await openWhenReachable(async () => {
      calls += 1;
      if (calls === 1) throw refused();
      if (calls === 2) {
        const url = standInUrl(given.logged);
        seen.push(
          await answer(`${url}/v1/subscriptions`, { method: 'POST', body: '{"subscriptions":[]}' }),
          await answer(`${url}/api/2/subscriptions/alice.json`),
          await answer(`${url}/health/ready`),
          await answer(`${url}/health/live`),
        );
        seen.push((await fetch(`${url}/health/live`, { method: 'HEAD' })).status);
        throw Object.assign(new Error('There is no leader for this topic-partition'), {
          name: 'KafkaJSProtocolError',
          retriable: true,
        });
      }
      return value;
    }, given);
    const unavailable = {
      status: 503,
      retryAfter: '7',
      body: { code: '503', message: 'Service unavailable, retry later' },
    };
    expect(seen).toEqual([
      unavailable,
      unavailable,
      {
        status: 503,
        retryAfter: '7',
        body: {
          code: '503',
          message: 'Service unavailable, retry later: starting: connect ECONNREFUSED 127.0.0.1:5432',
        },
      },
      { status: 200, retryAfter: null, body: { status: 'ok' } },
      200,
    ]);
    expect(calls).toBe(3);
    expect(result?.opened).toBe(value);
    const standIn = result?.standIn;
    expect(standIn).toBeDefined();
    expect(await listening(standIn!.port)).toBe(true);
    await standIn!.close();
    expect(await listening(standIn!.port)).toBe(false);
    expect(given.logged).toHaveLength(3);
    expect(given.logged[1]).toMatch(/^out of reach: connect ECONNREFUSED 127\.0\.0\.1:5432; trying again in/);
    expect(given.logged[2]).toMatch(/^out of reach: There is no leader for this topic-partition; trying/);
  });

  it('fails at once on a failure that is not a dependency out of reach', async () => {
    const given = options();
    let calls = 0;
    await expect(
      openWhenReachable(async () => {
        calls += 1;
        throw Object.assign(new Error('password authentication failed for user "castlog"'), {
          code: '28P01',
        });
      }, given),
    ).rejects.toThrow('password authentication failed');
    expect({ calls, logged: given.logged }).toEqual({ calls: 1, logged: [] });
  });

  it('a final failure after waiting closes the stand-in', async () => {
    const given = options();
    let calls = 0;
    await expect(
      openWhenReachable(async () => {
        calls += 1;
        throw calls === 1 ? refused() : new Error('migration failed');
      }, given),
    ).rejects.toThrow('migration failed');
    const port = standInPort(given.logged);
    expect(port).toBeGreaterThan(0);
    expect(await listening(port)).toBe(false);
  });

  it('stops waiting when stopped, closing the stand-in and whatever opened meanwhile', async () => {
    const stop = new AbortController();
    const given = { ...options(stop.signal), initialMs: 60_000, maxMs: 60_000 };
    const waiting = openWhenReachable(async () => {
      throw refused();
    }, given);
    while (given.logged.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const port = standInPort(given.logged);
    expect(await listening(port)).toBe(true);
    stop.abort();
    expect(await waiting).toBeUndefined();
    expect(await listening(port)).toBe(false);

    const late = new AbortController();
    const value = opened();
    const result = await openWhenReachable(async () => {
      late.abort();
      return value;
    }, options(late.signal));
    expect({ result, closed: value.closed }).toEqual({ result: undefined, closed: true });
  });

  it('does not wait for an attempt under way when stopped, and closes what it opens afterwards', async () => {
    const stop = new AbortController();
    const given = options(stop.signal);
    const value = opened();
    let finish: (opened: typeof value) => void = () => undefined;
    const attempt = new Promise<typeof value>((resolve) => (finish = resolve));
    const waiting = openWhenReachable(() => attempt, given);
    stop.abort();
    expect(await waiting).toBeUndefined();
    expect(value.closed).toBe(false);
    finish(value);
    await attempt;
    await new Promise((resolve) => setImmediate(resolve));
    expect(value.closed).toBe(true);
  });
});

/** A module whose start-up hook waits until the test lets it, as a projector joining its group. */
let bootstrapped: () => void = () => undefined;
let startedBootstrap: () => void = () => undefined;

@Controller()
class PingController {
  @Get('ping')
  ping() {
    return { pong: true };
  }
}

@Module({
  controllers: [PingController],
  providers: [{ provide: RequestMetrics, useFactory: () => new Metrics(new DependencyHealth()) }],
})
class SlowStartModule implements OnApplicationBootstrap {
  async onApplicationBootstrap(): Promise<void> {
    startedBootstrap();
    await new Promise<void>((resolve) => (bootstrapped = resolve));
  }
}

/** A port nothing listens on now. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer();
    probe.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

describe('listenBehindStandIn', () => {
  it('answers /health/live 200 and the rest 503 while the start-up hooks run, then serves the app on the same port', async () => {
    const port = await freePort();
    const app = await createHttpApp(SlowStartModule, loadConfig({}));
    const inBootstrap = new Promise<void>((resolve) => (startedBootstrap = resolve));
    let done = false;
    const listened = listenBehindStandIn(app, undefined, {
      host: '127.0.0.1',
      port,
      retryAfterSeconds: 3,
    }).then(() => void (done = true));
    const base = `http://127.0.0.1:${port}`;
    try {
      await inBootstrap;
      expect(await answer(`${base}/health/live`)).toEqual({
        status: 200,
        retryAfter: null,
        body: { status: 'ok' },
      });
      expect(await answer(`${base}/ping`)).toEqual({
        status: 503,
        retryAfter: '3',
        body: { code: '503', message: 'Service unavailable, retry later' },
      });
      expect(await answer(`${base}/health/ready`)).toEqual(
        expect.objectContaining({
          status: 503,
          body: expect.objectContaining({
            message: expect.stringMatching(/starting: the process is starting/),
          }),
        }),
      );
      expect(done).toBe(false);
      bootstrapped();
      await listened;
      expect(await answer(`${base}/ping`)).toEqual({ status: 200, retryAfter: null, body: { pong: true } });
    } finally {
      bootstrapped();
      await listened;
      await app.close();
    }
  });
});
