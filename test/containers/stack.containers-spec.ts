import { AuthStore } from '@castlog/auth';
import { randomBytes } from 'node:crypto';
import { IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { DataSource } from 'typeorm';
import { checkAll, compose, composeUp, waitUntilReady } from '../../tools/containers/main';
import { Engine, findEngine, output, run } from '../../tools/containers/engine';
import { ApiClient } from '../support/api-client';
import { feed, guid } from '../support/contract';
import { uniqueName } from '../support/databases';
import { poll } from '../support/until';

const USERS = 6;

/** The compose stack of docker/compose.yaml as `npm run containers:up` started it (API_URL,
 * DATABASE_URL): through the HAProxy in front of two API replicas, with three projector replicas,
 * Kafka and PostgreSQL in containers. */
describe('the compose stack', () => {
  const apiUrl = process.env.API_URL!;
  const databaseUrl = process.env.DATABASE_URL!;
  let engine: Engine;
  const tokens: string[] = [];
  const as = (token: string) => new ApiClient(apiUrl, `Bearer ${token}`);

  beforeAll(async () => {
    if (!apiUrl || !databaseUrl) throw new Error('API_URL and DATABASE_URL must name the running stack');
    engine = await findEngine(() => undefined);
    await waitUntilReady(apiUrl);
  });

  it('makes users with the cli image', async () => {
    const name = uniqueName('container');
    const password = randomBytes(12).toString('base64url');
    await run(engine, compose(engine, 'run', '--rm', '-T', 'cli', 'users', 'add', name), {
      input: `${password}\n`,
    });
    const token = (
      await output(engine, compose(engine, 'run', '--rm', '-T', 'cli', 'tokens', 'issue', name))
    ).trim();
    expect(token).toMatch(/^\S+$/);
    tokens.push(token);
    // The rest from the host, on the published PostgreSQL, as an operator's `castlog` would.
    const dataSource = await new DataSource({ type: 'postgres', url: databaseUrl }).initialize();
    try {
      const store = new AuthStore(dataSource);
      while (tokens.length < USERS) {
        const other = uniqueName('container');
        await store.addUser(other, randomBytes(12).toString('base64url'));
        tokens.push((await store.issueToken(other, 'cli', 3_600_000)).token);
      }
    } finally {
      await dataSource.destroy();
    }
  });

  it('serves a POST, GET, PATCH and DELETE round trip through the proxy', async () => {
    const api = as(tokens[0]!);
    const [g, url, moved] = [guid(), feed('container'), feed('moved')];
    const added = await api.post('/v1/subscriptions', { subscriptions: [{ feed_url: url, guid: g }] });
    expect(added.status).toBe(200);
    expect(added.body.success).toEqual([
      expect.objectContaining({ feed_url: url, guid: g, is_subscribed: true }),
    ]);
    expect((await api.get(`/v1/subscriptions/${g}`)).body).toEqual(
      expect.objectContaining({ feed_url: url }),
    );
    const patched = await api.patch(`/v1/subscriptions/${g}`, { new_feed_url: moved });
    expect(patched.status).toBe(200);
    expect((await api.get(`/v1/subscriptions/${g}`)).body.feed_url).toBe(moved);
    const deleted = await api.delete(`/v1/subscriptions/${g}`);
    expect(deleted.status).toBe(202);
    const deletionId = deleted.body.deletion_id;
    await poll('the deletion to finish', async () => {
      const status = await api.get(`/v1/deletions/${deletionId}`);
      return status.body.status === 'SUCCESS' || undefined;
    });
  });

  it('goes on serving every user when one projector container is killed: the others take its partitions', async () => {
    const victim = (await output(engine, compose(engine, 'ps', '-q', 'projector-1'))).trim();
    expect(victim).not.toBe('');
    await run(engine, [engine.cli, 'kill', victim]);
    const killedAt = Date.now();
    // Every user's partition is served again (KAFKA_SESSION_TIMEOUT is 10 s in the stack).
    for (const token of tokens) {
      await poll(
        'a write of every user to be acknowledged after the kill',
        async () =>
          (await as(token).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed('after-kill') }] }))
            .status === 200,
        { timeoutMs: 90_000, everyMs: 500 },
      );
    }
    console.log(
      `[containers] projector killed: every user served again after ${(Date.now() - killedAt) / 1000} s`,
    );
    await composeUp(engine, 'projector-1');
    // Back in the stack: running and healthy before the next test stops it.
    await poll(
      'every container of the stack to be healthy again',
      async () => (await checkAll(engine)).length === 0,
      {
        timeoutMs: 90_000,
        everyMs: 1_000,
      },
    );
  });

  it("answers the contract's 503 with Retry-After through the proxy while no API replica is up", async () => {
    const authorization = `Bearer ${tokens[2]!}`;
    const services = ['api-1', 'api-2'];
    const ids = await Promise.all(
      services.map(async (service) => (await output(engine, compose(engine, 'ps', '-q', service))).trim()),
    );
    await run(engine, compose(engine, 'stop', ...services));
    try {
      for (const [method, body] of [
        ['GET', undefined],
        ['POST', { subscriptions: [{ feed_url: feed('no-replica') }] }],
      ] as const) {
        const response = await onNewConnection(apiUrl, method, '/v1/subscriptions', authorization, body);
        expect(response.status).toBe(503);
        expect(response.headers['retry-after']).toBe('1');
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(JSON.parse(response.text)).toEqual({
          code: '503',
          message: 'Service unavailable, retry later: no API replica answered',
        });
      }
    } finally {
      await composeUp(engine, ...services);
    }
    // Both replicas ready (asked inside each container), before the next test writes through the
    // proxy: a replica still starting would answer its 503.
    for (const id of ids) {
      await poll(
        `API container ${id} to be ready again`,
        () =>
          output(engine, [
            engine.cli,
            'exec',
            id,
            'node',
            '-e',
            "fetch('http://127.0.0.1:3000/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))",
          ]).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 120_000, everyMs: 1_000 },
      );
    }
    await poll(
      'the API to answer through the proxy again',
      async () =>
        (
          await as(tokens[2]!)
            .get('/v1/subscriptions')
            .catch(() => undefined)
        )?.status === 200,
      { timeoutMs: 60_000, everyMs: 500 },
    );
  });

  it('stops every app cleanly on SIGTERM and keeps the data in its volumes across a restart of the stack', async () => {
    const api = as(tokens[1]!);
    const [g, url] = [guid(), feed('kept')];
    expect(
      (await api.post('/v1/subscriptions', { subscriptions: [{ feed_url: url, guid: g }] })).status,
    ).toBe(200);
    const apps = ['api-1', 'api-2', 'projector-1', 'projector-2', 'projector-3'];
    const ids = await Promise.all(
      apps.map(async (service) => (await output(engine, compose(engine, 'ps', '-q', service))).trim()),
    );
    // SIGTERM, then SIGKILL after the 20 s grace period: a clean stop exits 0 before that.
    await run(engine, compose(engine, 'stop'));
    const exitCodes = await output(engine, [
      engine.cli,
      'inspect',
      '--format',
      '{{.State.ExitCode}}',
      ...ids,
    ]);
    expect(exitCodes.trim().split('\n')).toEqual(apps.map(() => '0'));
    await run(engine, compose(engine, 'down'));
    await composeUp(engine);
    // The proxy balances over both replicas while the second may still answer 503 (not ready yet):
    // the answer that ends the wait is the one checked.
    const kept = await poll(
      'the API to answer after the restart',
      async () => {
        const response = await api.get(`/v1/subscriptions/${g}`).catch(() => undefined);
        return response?.status === 200 ? response : undefined;
      },
      { timeoutMs: 240_000, everyMs: 1_000 },
    );
    expect(kept.body.feed_url).toBe(url);
  });

  it('has every container healthy', async () => {
    const names = (await output(engine, compose(engine, 'ps', '-q'))).split('\n').filter(Boolean);
    expect(names.length).toBe(9);
    await poll(
      'every container to be healthy',
      async () => {
        if (engine.cli === 'podman') return (await checkAll(engine)).length === 0;
        const states = await output(engine, [
          engine.cli,
          'inspect',
          '--format',
          '{{.State.Health.Status}}',
          ...names,
        ]);
        return states
          .split('\n')
          .filter(Boolean)
          .every((state) => state === 'healthy');
      },
      { timeoutMs: 120_000, everyMs: 2_000 },
    );
  });
});

/** One request on a connection of its own. A proxy that finds no server for a request on a reused
 * keep-alive connection closes it without an answer, so that the client retries on a new one (as
 * HAProxy does, by design); what a client gets is the answer on that new connection. */
function onNewConnection(
  baseUrl: string,
  method: string,
  path: string,
  authorization: string,
  body?: unknown,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      new URL(path, baseUrl),
      {
        method,
        agent: false,
        headers: {
          authorization,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}
