import { parseRfc3339Micros } from '@castlog/domain';
import { findRunningPostgres, freePort, isAlive } from '@castlog/infra';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient, ApiResponse } from '../support/api-client';
import { feed, guid } from '../support/contract';
import { childEnv, RunningChild, runCli, startChild } from '../support/processes';
import { terminateBackends } from '../support/databases';
import { poll } from '../support/until';
import { SyncAction, syncAction, SyncClient } from '../support/sync-face';
import { WebClient } from '../support/web-client';

const READY = /castlog ready in \d+ ms at (http:\/\/\S+);/;

/** The processes whose parent is `pid` (Linux: the fourth field of /proc/<pid>/stat). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/** `npm start` (the built embedded app) when its own PostgreSQL loses every connection, and when
 * its postmaster is killed: the process stays up, answers 503 meanwhile, restarts PostgreSQL on the
 * same port, serves writes again within seconds, keeps every acknowledged write (`/v1` adds, and
 * sync subscribes, each sent again as it was until a 200 answers it: applied once), and still stops
 * cleanly without leaving PostgreSQL behind. */
describe('embedded mode under PostgreSQL faults', () => {
  let dataDir: string;
  let castlog: RunningChild;
  let api: ApiClient;
  let sync: SyncClient;
  /** Signed in to the web pages. */
  let web: WebClient;
  const acknowledged: { guid: string; feedUrl: string }[] = [];

  /** Sync actions a 200 answered, with the requests it took; the one still waiting for a 200 is
   * sent again as it was, as a client of the draft retries. */
  const acknowledgedSync: { action: SyncAction; status: string; syncId: string; sent: number }[] = [];
  let pendingSync: { action: SyncAction; sent: number } | undefined;

  const postgresDir = () => join(dataDir, 'postgres');
  const writeOpa = async (): Promise<number> => {
    const [g, feedUrl] = [guid(), feed('embedded-fault')];
    const response = await api
      .post('/v1/subscriptions', { subscriptions: [{ feed_url: feedUrl, guid: g }] })
      .catch(() => undefined);
    if (response?.status === 200) acknowledged.push({ guid: g, feedUrl });
    return response?.status ?? 0;
  };
  /** Sends the sync action waiting for a 200, or a subscribe of a new feed. */
  const sendSync = async (): Promise<ApiResponse | undefined> => {
    pendingSync ??= {
      action: syncAction('subscribe', { feed_url: feed('embedded-fault-sync') }, new Date()),
      sent: 0,
    };
    const waiting = pendingSync;
    waiting.sent += 1;
    const response = await sync.postRaw({ requests: [waiting.action] }).catch(() => undefined);
    if (response?.status === 200) {
      pendingSync = undefined;
      const [result] = response.body.results;
      acknowledgedSync.push({ ...waiting, status: result.status, syncId: result.data.sync_id });
    }
    return response;
  };
  const writeSync = async (): Promise<number> => (await sendSync())?.status ?? 0;
  /** Writes through /v1 and the sync face until each has one acknowledged; answers the seconds
   * that took. */
  const recovery = async (what: string): Promise<number> => {
    const started = Date.now();
    const statuses = new Set<number>();
    for (const write of [writeOpa, writeSync])
      await poll(what, async () => {
        const status = await write();
        statuses.add(status);
        return status === 200;
      });
    expect([...statuses].filter((status) => status !== 200 && status !== 503)).toEqual([]);
    return (Date.now() - started) / 1000;
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'castlog-embedded-faults-'));
    await chmod(dataDir, 0o755);
    const env = childEnv({
      CASTLOG_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      READ_YOUR_WRITES_TIMEOUT: '3s',
      REQUEST_TIMEOUT: '6s',
    });
    castlog = startChild('embedded', env);
    const [, url] = await castlog.waitForOutput(READY, 90_000);
    expect((await runCli(['users', 'add', 'faulty'], env, 'a long enough password\n')).code).toBe(0);
    const issued = await runCli(['tokens', 'issue', 'faulty'], env);
    expect(issued.code).toBe(0);
    api = new ApiClient(url!, `Bearer ${issued.stdout.trim()}`);
    sync = new SyncClient(api);
    web = new WebClient(url!);
    expect((await web.signIn({ name: 'faulty', password: 'a long enough password' })).status).toBe(303);
    expect(await writeOpa()).toBe(200);
    expect(await writeSync()).toBe(200);
  }, 120_000);

  afterAll(async () => {
    if (castlog?.child.exitCode === null) castlog.child.kill('SIGKILL');
    await findRunningPostgres(postgresDir())?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps running when every backend is terminated, and the next write succeeds within seconds', async () => {
    const server = findRunningPostgres(postgresDir())!;
    expect(await terminateBackends(server.url, 'castlog')).toBeGreaterThanOrEqual(3);
    const seconds = await recovery('a write to be acknowledged after every backend was terminated');
    console.log(
      `[embedded faults] backends terminated: writes on both faces were acknowledged again after ${seconds} s`,
    );
    expect(castlog.child.exitCode).toBeNull();
  }, 90_000);

  it('restarts its PostgreSQL when the postmaster is killed, and loses no acknowledged write', async () => {
    const killed = findRunningPostgres(postgresDir())!;
    process.kill(killed.pid, 'SIGKILL');
    const seconds = await recovery('a write to be acknowledged after PostgreSQL was killed');
    console.log(
      `[embedded faults] postmaster SIGKILLed: writes on both faces were acknowledged again after ${seconds} s`,
    );
    expect(castlog.child.exitCode).toBeNull();
    // The pools reconnect as soon as the new server accepts connections, which can be before the
    // supervisor has seen it ready and logged the restart, so the line may follow the write's answer.
    await castlog.waitForOutput(/embedded PostgreSQL restarted/, 15_000);
    const restarted = findRunningPostgres(postgresDir())!;
    expect(restarted.pid).not.toBe(killed.pid);
    expect(restarted.port).toBe(killed.port);

    const listed = await api.get('/v1/subscriptions');
    expect(listed.status).toBe(200);
    const present = new Map(
      (listed.body.subscriptions as { guid: string; feed_url: string }[]).map((s) => [s.guid, s.feed_url]),
    );
    expect(acknowledged.filter((w) => present.get(w.guid) !== w.feedUrl)).toEqual([]);
  }, 90_000);

  it('answers 503 with Retry-After while its PostgreSQL stops answering, and serves again once it answers', async () => {
    const server = findRunningPostgres(postgresDir())!;
    // Paused, not gone: connections stay open and the kernel still acknowledges them, so a query
    // sent on a pooled connection gets no error, only no answer.
    const paused = [server.pid, ...childrenOf(server.pid)];
    for (const pid of paused) process.kill(pid, 'SIGSTOP');
    let answers: ApiResponse[];
    let page: Awaited<ReturnType<WebClient['send']>>;
    try {
      const pageAnswer = web.send('GET', '/web/subscriptions');
      const basic = `Basic ${Buffer.from('faulty:a long enough password').toString('base64')}`;
      answers = await Promise.all([
        ...Array.from({ length: 6 }, () => api.get('/v1/subscriptions')),
        api.post('/v1/subscriptions', { subscriptions: [{ feed_url: feed('paused') }] }),
        // Refused, then sent again as it was once PostgreSQL answers.
        sendSync().then((response) => {
          if (response === undefined) throw new Error('no answer to a sync POST');
          return response;
        }),
        api.get('/v1/subscriptions', { authorization: basic }),
        api.get('/api/2/devices/faulty.json', { authorization: basic }),
        api.post('/v1/auth/login', { username: 'faulty', password: 'a long enough password' }),
        api.get('/health/ready'),
      ]);
      page = await pageAnswer;
    } finally {
      for (const pid of paused) process.kill(pid, 'SIGCONT');
    }
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 503));
    expect(page.status).toBe(503);
    expect(page.headers.get('retry-after')).toMatch(/^\d+$/);
    for (const answer of answers) {
      expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(answer.body).toEqual({ code: '503', message: expect.stringMatching(/^Service unavailable/) });
    }
    // Readiness names the dependency itself, well before the request deadline would answer for it.
    const readiness = answers.at(-1)?.body.message;
    expect(readiness).toMatch(
      /(read model|event log): no (answer|connection) within 2000 ms| down for \d+ s \(/,
    );
    expect(readiness).not.toMatch(/no answer within 6000 ms/);
    const seconds = await recovery('a write to be acknowledged after PostgreSQL answered again');
    console.log(
      `[embedded faults] PostgreSQL paused: writes on both faces were acknowledged ${seconds} s after it resumed`,
    );
    expect((await web.send('GET', '/web/subscriptions')).status).toBe(200);
    expect(castlog.child.exitCode).toBeNull();
  }, 90_000);

  it('applied every acknowledged sync action once, as answered; sent again, each answers the same and changes nothing', async () => {
    expect(acknowledgedSync.length).toBeGreaterThanOrEqual(4);
    // The one refused while PostgreSQL was paused went through when sent again.
    expect(acknowledgedSync.some(({ sent }) => sent > 1)).toBe(true);
    const listed = await sync.subscriptions({ includeUnsubscribed: true, limit: 1000 });
    const byFeed = new Map(listed.map((entity) => [entity.feed_url, entity]));
    expect(listed).toHaveLength(byFeed.size);
    expect(
      acknowledgedSync.filter(({ action, status, syncId }) => {
        const entity = byFeed.get(action.data.feed_url as string);
        const occurred = parseRfc3339Micros(action.occurred_at);
        return !(
          status === 'applied' &&
          entity?.sync_id === syncId &&
          parseRfc3339Micros(entity.subscribed_at) === occurred &&
          entity.unsubscribed_at === undefined
        );
      }),
    ).toEqual([]);
    const again = await sync.sync(acknowledgedSync.map(({ action }) => action));
    expect(again.map((result) => [result.status, result.data.sync_id])).toEqual(
      acknowledgedSync.map(({ status, syncId }) => [status, syncId]),
    );
    expect(await sync.subscriptions({ includeUnsubscribed: true, limit: 1000 })).toEqual(listed);
  }, 60_000);

  it('still stops cleanly on SIGTERM, leaving no PostgreSQL running', async () => {
    const server = findRunningPostgres(postgresDir())!;
    castlog.child.kill('SIGTERM');
    expect(await castlog.exited(30_000)).toEqual({ code: 0, signal: null });
    expect(isAlive(server.pid, 'postgres')).toBe(false);
    expect(findRunningPostgres(postgresDir())).toBeUndefined();
  }, 60_000);
});
