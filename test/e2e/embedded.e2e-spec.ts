import { findRunningPostgres, freePort } from '@castlog/infra';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../support/api-client';
import { feed, guid } from '../support/contract';
import { childEnv, runCli, startChild } from '../support/processes';
import { poll } from '../support/until';

const READY = /castlog ready in (\d+) ms at (http:\/\/\S+);/;

describe('embedded mode: npm start runs the whole service with nothing else installed', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'castlog-embedded-'));
    // Embedded PostgreSQL runs as the postgres user when we are root: it must reach the directory.
    await chmod(dataDir, 0o755);
    env = childEnv({
      CASTLOG_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    });
  });

  afterAll(async () => {
    await findRunningPostgres(join(dataDir, 'postgres'))?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves a round trip, keeps the data across a restart, refuses a second server, and stops cleanly', async () => {
    const first = startChild('embedded', env);
    const [, startupMs, url] = await first.waitForOutput(READY, 90_000);
    expect(Number(startupMs)).toBeGreaterThan(0);
    expect(first.output()).toContain(dataDir);
    // The start-up hint names a data directory other than the default, as the CLI needs it.
    expect(first.output()).toContain(`| CASTLOG_DATA_DIR='${dataDir}' npm run castlog -- users add alice`);

    const added = await runCli(['users', 'add', 'alice'], env, 'correct horse battery\n');
    expect(added).toEqual(expect.objectContaining({ code: 0 }));
    const issued = await runCli(['tokens', 'issue', 'alice'], env);
    expect(issued.code).toBe(0);
    const token = issued.stdout.trim();
    expect(token.split('\n')).toHaveLength(1);

    const alice = new ApiClient(url!, `Bearer ${token}`);
    const [g, url1, url2] = [guid(), feed(), feed('moved')];
    expect(
      (await alice.post('/v1/subscriptions', { subscriptions: [{ feed_url: url1, guid: g }] })).status,
    ).toBe(200);
    expect((await alice.get(`/v1/subscriptions/${g}`)).body.feed_url).toBe(url1);
    expect((await alice.patch(`/v1/subscriptions/${g}`, { new_feed_url: url2 })).status).toBe(200);
    const other = guid();
    await alice.post('/v1/subscriptions', { subscriptions: [{ feed_url: feed('other'), guid: other }] });
    const deletion = await alice.delete(`/v1/subscriptions/${other}`);
    expect(deletion.status).toBe(202);

    const second = startChild('embedded', env);
    const refused = await second.exited(60_000);
    expect(refused.code).toBe(1);
    expect(second.output()).toMatch(/already running on the data directory/);

    // Writes in flight when SIGTERM arrives finish: each answers 200 (and is kept) or is refused
    // cleanly; none hangs and none is lost once acknowledged.
    const inFlight = Array.from({ length: 20 }, (_, i) =>
      alice
        .post('/v1/subscriptions', { subscriptions: [{ feed_url: `https://drain.example.com/${i}` }] })
        .then((response) => ({ i, status: response.status }))
        .catch(() => ({ i, status: 0 })),
    );
    first.child.kill('SIGTERM');
    const drained = await Promise.all(inFlight);
    for (const { status } of drained) expect([0, 200, 503]).toContain(status);
    const acknowledged = drained.filter((result) => result.status === 200).map((result) => result.i);
    const stopped = await first.exited(25_000);
    if (stopped.code !== 0) throw new Error(`shutdown failed:\n${first.output()}`);
    expect(stopped).toEqual({ code: 0, signal: null });
    expect(findRunningPostgres(join(dataDir, 'postgres'))).toBeUndefined();

    const again = startChild('embedded', env);
    const [, , url3] = await again.waitForOutput(READY, 90_000);
    const aliceAgain = new ApiClient(url3!, `Bearer ${token}`);
    const after = await aliceAgain.get(`/v1/subscriptions/${g}`);
    expect(after.status).toBe(200);
    expect(after.body.feed_url).toBe(url2);
    const kept = await aliceAgain.get('/v1/subscriptions?per_page=100');
    for (const i of acknowledged) {
      expect(kept.body.subscriptions).toContainEqual(
        expect.objectContaining({ feed_url: `https://drain.example.com/${i}` }),
      );
    }
    const status = await aliceAgain.get(`/v1/deletions/${deletion.body.deletion_id}`);
    expect(['PENDING', 'SUCCESS']).toContain(status.body.status);
    again.child.kill('SIGINT');
    expect((await again.exited(25_000)).code).toBe(0);
    expect(findRunningPostgres(join(dataDir, 'postgres'))).toBeUndefined();

    // A release with a new projection version: the same process rebuilds it and switches to it.
    const bumped = startChild('embedded', { ...env, PROJECTION_VERSION: '2' });
    const [, , url4] = await bumped.waitForOutput(READY, 90_000);
    const aliceBumped = new ApiClient(url4!, `Bearer ${token}`);
    const fresh = guid();
    expect(
      (
        await aliceBumped.post('/v1/subscriptions', {
          subscriptions: [{ feed_url: feed('v2'), guid: fresh }],
        })
      ).status,
    ).toBe(200);
    const anonymous = new ApiClient(url4!);
    await bumped.explaining(
      poll(
        'version 2 to serve reads',
        async () => (await anonymous.get('/health/ready')).body.projection_version === 2,
        { timeoutMs: 30_000, everyMs: 100 },
      ),
    );
    expect((await aliceBumped.get(`/v1/subscriptions/${g}`)).body.feed_url).toBe(url2);
    expect((await aliceBumped.get(`/v1/subscriptions/${fresh}`)).status).toBe(200);
    // Reads can switch (a notice on another connection) before the projector logs the switch.
    await bumped.waitForOutput(
      /projection version 2 has caught up with version 1 and now serves reads/,
      10_000,
    );
    bumped.child.kill('SIGINT');
    expect((await bumped.exited(25_000)).code).toBe(0);
  }, 300_000);

  it('exits 1 on a port in use, having stopped its PostgreSQL and released the data directory', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const { port } = taken.address() as { port: number };
    try {
      const blocked = startChild('embedded', { ...env, PORT: String(port) });
      const exited = await blocked.exited(90_000);
      expect(exited.code).toBe(1);
      expect(blocked.output()).toMatch(/failed to start: listen EADDRINUSE/);
      expect(findRunningPostgres(join(dataDir, 'postgres'))).toBeUndefined();
      expect(existsSync(join(dataDir, 'castlog.pid'))).toBe(false);
    } finally {
      taken.close();
    }
  }, 120_000);
});
