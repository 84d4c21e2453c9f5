import { AuthStore } from '@castlog/auth';
import { KafkaEventLog } from '@castlog/event-log';
import {
  freePort,
  onServer,
  RunningKafka,
  RunningPostgres,
  startEmbeddedPostgres,
  startLocalKafka,
  withDatabase,
} from '@castlog/infra';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { startTestServer, TestServer } from '../../libs/feeds/src/testing/test-server';
import { terminateBackends, uniqueName } from '../support/databases';
import { childEnv, RunningChild, runCli, startChild } from '../support/processes';
import { projectionAtEnd } from '../support/projection';
import { poll } from '../support/until';
import { Load, LoadUser, settingKey, Write } from './load';
import { resendAcknowledged, syncActionsOf, syncEntitiesOf, wrongSyncActions } from './sync-verdict';

const USERS = 6;
const PARTITIONS = 6;
const DATABASE = 'castlog_drills';
const SCHEMA = 'castlog';
/** The group gives a silent projector's partitions to the others after this. */
const SESSION_TIMEOUT = '10s';

interface Process {
  readonly name: string;
  readonly run: RunningChild;
  readonly url: string;
  killed: boolean;
}

/** The fault drills of docs/operations.md, on one scaled stack — two API processes, three
 * projector replicas and the feed resolver (the built apps) around this file's own PostgreSQL and
 * Kafka broker, the feeds served by the test on 127.0.0.1 — under
 * concurrent writes from several users through every face (`/v1`, gpodder.net uploads, and sync
 * actions sent again with the same action_id until a 200 answers them), one
 * drill after another. Each drill measures the time from the fault (or from the dependency's
 * return) until every writer has had a write acknowledged again, and checks that every process not
 * killed is alive and ready. A process started while PostgreSQL or the broker is down must wait
 * for it, answering 503, and then serve on the same port. The last case checks what all the drills
 * together must leave: every acknowledged write in the log once and in the read model as answered,
 * every other write at most once, no answer other than 200, 503 (or a cut connection to the API
 * that was killed), every acknowledged sync action applied once as answered and answering its first
 * status when sent again, `castlog replay --verify` equal, and every subscribed feed fetched and
 * named by the resolver that lived through every drill. */
describe('fault drills: a scaled castlog under concurrent writes', () => {
  let dir: string;
  let postgres: RunningPostgres;
  let postgresPort: number;
  let kafka: RunningKafka;
  let kafkaPort: number;
  let databaseUrl: string;
  let env: NodeJS.ProcessEnv;
  const apis: Process[] = [];
  const projectors: Process[] = [];
  let resolver: Process;
  let feeds: TestServer;
  let load: Load;
  const startedDuringOutages: RunningChild[] = [];
  let lateApi: Awaited<ReturnType<typeof startDuringOutage>> | undefined;
  let lateProjector: Awaited<ReturnType<typeof startDuringOutage>> | undefined;
  const recoverySeconds: Record<string, number> = {};

  const alive = (processes: Process[]) => processes.filter((p) => !p.killed);
  const everyProcess = () => [...apis, ...projectors, ...(resolver ? [resolver] : [])];

  const ANNOUNCED = /(?:listening on|metrics on) (http:\/\/[^\s"(]+)/;

  async function start(
    app: 'api' | 'projector' | 'resolver',
    index: number,
    extraEnv: NodeJS.ProcessEnv = {},
  ): Promise<Process> {
    const run = startChild(app, { ...env, ...extraEnv });
    const [, url] = await run.waitForOutput(ANNOUNCED, 90_000);
    return { name: `${app} ${index}`, run, url: url!, killed: false };
  }

  /** Starts a process while a dependency is out of reach: it must stay up and answer 503 with
   * Retry-After on its port (`/health/live` 200) until the dependency is back. Answers the process
   * and a wait for it to start for real, on the same port, once it is. */
  async function startDuringOutage(
    app: 'api' | 'projector',
    index: number,
    down: RegExp,
  ): Promise<{ standInUrl: string; started: () => Promise<Process> }> {
    const run = startChild(app, env);
    startedDuringOutages.push(run);
    const [, url] = await run.explaining(
      run.waitForOutput(/answering 503 on (http:\/\/[^\s"]+) until it is back/, 90_000),
    );
    const standInUrl = url!;
    const post = await fetch(new URL('/v1/subscriptions', standInUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"subscriptions":[{"feed_url":"https://example.com/during-outage.xml"}]}',
    });
    expect({
      status: post.status,
      retryAfter: post.headers.get('retry-after'),
      body: await post.json(),
    }).toEqual({
      status: 503,
      retryAfter: '1',
      body: { code: '503', message: 'Service unavailable, retry later' },
    });
    const ready = await fetch(new URL('/health/ready', standInUrl));
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { message: string }).message).toMatch(down);
    expect((await fetch(new URL('/health/live', standInUrl))).status).toBe(200);
    expect(run.child.exitCode).toBeNull();
    return {
      standInUrl,
      started: async () => {
        const [, announced] = await run.explaining(run.waitForOutput(ANNOUNCED, 90_000));
        expect(announced).toBe(standInUrl);
        return { name: `${app} ${index}, started during an outage`, run, url: announced!, killed: false };
      },
    };
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'castlog-drills-'));
    await chmod(dir, 0o755);
    kafkaPort = await freePort();
    feeds = await startTestServer((request, response) => {
      response
        .writeHead(200, { 'content-type': 'application/rss+xml' })
        .end(`<rss version="2.0"><channel><title>Drill ${request.url}</title></channel></rss>`);
    });
    [postgres, kafka] = await Promise.all([
      startEmbeddedPostgres({ dataDir: join(dir, 'postgres') }),
      startLocalKafka({ dir: join(dir, 'kafka'), port: kafkaPort }),
    ]);
    postgresPort = postgres.port;
    await onServer(postgres.url, (admin) => admin.query(`CREATE DATABASE ${DATABASE}`));
    databaseUrl = withDatabase(postgres.url, DATABASE);
    env = childEnv({
      DATABASE_URL: databaseUrl,
      KAFKA_BROKERS: kafka.brokers,
      KAFKA_TOPIC: uniqueName('drills'),
      KAFKA_PARTITIONS: String(PARTITIONS),
      KAFKA_SESSION_TIMEOUT: SESSION_TIMEOUT,
      PROJECTOR_GROUP: uniqueName('drills'),
      READ_MODEL_SCHEMA: SCHEMA,
      RATE_LIMIT_PER_MINUTE: '0',
      READ_YOUR_WRITES_TIMEOUT: '5s',
      DATABASE_CONNECT_TIMEOUT: '2s',
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    // One at a time: the first creates the topic and runs the migrations.
    for (let i = 1; i <= 3; i += 1) projectors.push(await start('projector', i));
    for (let i = 1; i <= 2; i += 1) apis.push(await start('api', i));
    resolver = await start('resolver', 1, {
      FEEDS: 'on',
      FEEDS_GROUP: uniqueName('drills-feeds'),
      FEEDS_ALLOWED_RANGES: '127.0.0.1/32',
    });

    const dataSource = await new DataSource({ type: 'postgres', url: databaseUrl }).initialize();
    try {
      const store = new AuthStore(dataSource);
      const users: LoadUser[] = [];
      for (let i = 0; i < USERS; i += 1) {
        const name = uniqueName('driller');
        const user = await store.addUser(name, `password-${i}-of-the-drills`);
        users.push({ id: user.id, name, token: (await store.issueToken(name, 'cli', 3_600_000)).token });
      }
      load = new Load(
        users,
        () => alive(apis).map((api) => api.url),
        (label) => feeds.url(`/${label}/${randomUUID()}.xml`),
      );
    } finally {
      await dataSource.destroy();
    }
    load.start();
  }, 240_000);

  afterAll(async () => {
    await load?.stop();
    for (const run of [...everyProcess().map((p) => p.run), ...startedDuringOutages])
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
    await Promise.all([kafka?.stop(), postgres?.stop(), feeds?.close()]);
    await rm(dir, { recursive: true, force: true });
    console.log(`[drills] time to recover, s: ${JSON.stringify(recoverySeconds)}`);
  }, 120_000);

  /** Waits for steady writes, runs the fault, then waits until every writer has had a write
   * acknowledged since the instant `fault` answers, and until every live process is ready. */
  async function drill(name: string, fault: () => Promise<number>): Promise<void> {
    const before = load.writes.length;
    await poll(
      `writes to be acknowledged before: ${name}`,
      () => load.acknowledged(before).length >= 3 * USERS,
    );
    const from = await fault();
    const recovered = await poll(
      `every writer to be acknowledged again after: ${name}`,
      () => load.recoveredAt(from),
      {
        timeoutMs: 120_000,
      },
    );
    recoverySeconds[name] = Math.round(recovered - from) / 1000;
    console.log(
      `[drills] ${name}: every writer acknowledged again ${recoverySeconds[name]} s after the fault`,
    );
    for (const process of everyProcess()) {
      if (process.killed) continue;
      expect({ process: process.name, exitCode: process.run.child.exitCode }).toEqual({
        process: process.name,
        exitCode: null,
      });
      let last = 'no answer';
      await poll(
        `${process.name} to be ready after: ${name}`,
        async () => {
          const response = await fetch(new URL('/health/ready', process.url)).catch(() => undefined);
          last = response ? `${response.status} ${await response.text()}` : 'no answer';
          return response?.status === 200;
        },
        { timeoutMs: 60_000 },
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; its last answer: ${last}`);
      });
    }
  }

  it('(a) every database backend terminated mid-load', async () => {
    await drill('backends terminated', async () => {
      expect(await terminateBackends(postgres.url, DATABASE)).toBeGreaterThanOrEqual(5);
      return Date.now();
    });
    const metrics = await (await fetch(new URL('/metrics', apis[1]!.url))).text();
    expect(metrics).toMatch(/castlog_dependency_disconnections_total\{component="postgres"\} [1-9]/);
    expect(metrics).toMatch(/castlog_dependency_reconnections_total\{component="postgres"\} [1-9]/);
  }, 180_000);

  it('(b) PostgreSQL stopped for a few seconds and started again; an API process started meanwhile waits for it', async () => {
    await drill('PostgreSQL stopped for 5 s', async () => {
      const stoppedAt = load.writes.length;
      await postgres.stop();
      await poll('a write to be refused with 503 while PostgreSQL is down', () =>
        load.writes.slice(stoppedAt).some((w) => w.status === 503),
      );
      const ready = await fetch(new URL('/health/ready', apis[1]!.url));
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toBe('1');
      expect(((await ready.json()) as { message: string }).message).toMatch(
        /^Service unavailable, retry later: .*(postgres|read model)/,
      );
      const outageStart = Date.now();
      lateApi = await startDuringOutage(
        'api',
        3,
        /^Service unavailable, retry later: starting: .*ECONNREFUSED/,
      );
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 5_000 - (Date.now() - outageStart))));
      postgres = await startEmbeddedPostgres({ dataDir: join(dir, 'postgres'), port: postgresPort });
      return Date.now();
    });
    // Taken into the load (and the drills' checks) only once it serves for real: between its
    // stand-in and the app, its port refuses connections for a moment.
    apis.push(await lateApi!.started());
  }, 180_000);

  it('(c) the broker SIGKILLed and restarted; a projector started meanwhile waits for it', async () => {
    await drill('broker SIGKILLed', async () => {
      const killedAt = load.writes.length;
      process.kill(kafka.pid, 'SIGKILL');
      await poll('a write to be refused with 503 while the broker is down', () =>
        load.writes.slice(killedAt).some((w) => w.status === 503),
      );
      lateProjector = await startDuringOutage(
        'projector',
        4,
        /^Service unavailable, retry later: starting: /,
      );
      kafka = await startLocalKafka({ dir: join(dir, 'kafka'), port: kafkaPort });
      return Date.now();
    });
    projectors.push(await lateProjector!.started());
  }, 300_000);

  it('(d) one of three projector replicas SIGKILLed: the others take its partitions', async () => {
    await drill('one projector SIGKILLed', async () => {
      const victim = projectors[0]!;
      victim.run.child.kill('SIGKILL');
      victim.killed = true;
      expect(await victim.run.exited(10_000)).toEqual({ code: null, signal: 'SIGKILL' });
      return Date.now();
    });
  }, 180_000);

  it('(e) one of two API processes SIGKILLed', async () => {
    await drill('one API process SIGKILLed', async () => {
      const victim = apis[0]!;
      victim.run.child.kill('SIGKILL');
      victim.killed = true;
      expect(await victim.run.exited(10_000)).toEqual({ code: null, signal: 'SIGKILL' });
      return Date.now();
    });
  }, 180_000);

  it('leaves every acknowledged write exactly once as answered, others at most once, and a replay equal', async () => {
    await load.stop();
    const writes = load.writes;
    const killedApis = new Set(apis.filter((api) => api.killed).map((api) => api.url));
    const unexpected = writes.filter(
      (w) => !(w.status === 200 || w.status === 503 || (w.status === 'cut' && killedApis.has(w.target))),
    );
    expect(unexpected.map(({ kind, status, target }) => ({ kind, status, target }))).toEqual([]);
    const acknowledged = writes.filter((w) => w.status === 200);
    expect(acknowledged.length).toBeGreaterThan(100);
    expect(acknowledged.filter((w) => w.kind === 'gpodder-add').length).toBeGreaterThan(20);
    expect(writes.filter((w) => w.kind === 'gpodder-add' && w.status === 503).length).toBeGreaterThan(0);
    expect(acknowledged.filter((w) => w.kind === 'gpodder-settings').length).toBeGreaterThan(20);
    expect(writes.some((w) => w.status === 503)).toBe(true);

    const log = await KafkaEventLog.open({
      brokers: [kafka.brokers],
      topic: env.KAFKA_TOPIC!,
      partitions: PARTITIONS,
      replicationFactor: 1,
      clientId: 'castlog-drills-check',
    });
    const dataSource = await new DataSource({ type: 'postgres', url: databaseUrl }).initialize();
    try {
      await poll(
        'the projection to reach the end of the log',
        () => projectionAtEnd(log, dataSource, SCHEMA),
        {
          timeoutMs: 60_000,
        },
      );

      const inLog = new Map<string, number>();
      await log.readToEnd(async (batch) => {
        for (const { requestId } of batch.records) inLog.set(requestId, (inLog.get(requestId) ?? 0) + 1);
      });
      const rows: { user_id: string; id: string; feed_url: string; is_subscribed: boolean }[] =
        await dataSource.query(
          `SELECT user_id, id, feed_url, is_subscribed FROM ${SCHEMA}.subscriptions WHERE user_id = ANY($1)`,
          [[...new Set(writes.map((w) => w.user.id))]],
        );
      const subscription = new Map(rows.map((row) => [`${row.user_id} ${row.id}`, row]));
      const settingsRows: { user_id: string; settings: Record<string, unknown> }[] = await dataSource.query(
        `SELECT user_id, settings FROM ${SCHEMA}.gpodder_settings WHERE scope = 'account' AND user_id = ANY($1)`,
        [[...new Set(writes.map((w) => w.user.id))]],
      );
      const accountSettings = new Map(settingsRows.map((row) => [row.user_id, row.settings]));
      const byFeed = new Map(rows.map((row) => [`${row.user_id} ${row.feed_url}`, row]));
      const touchedAfter = new Set(
        writes.filter((w) => w.kind === 'unsubscribe').map((w) => `${w.user.id} ${w.guid}`),
      );

      const verdict = (w: Write) => {
        // A sync action's effect is checked by its action (below): an attempt that got no answer may
        // have applied it, and a retry of the same action then answers what it did.
        if (w.sync !== undefined) {
          const logged = inLog.get(w.requestId) ?? 0;
          return { inLog: w.status === 200 ? logged === 1 : logged <= 1, asAnswered: true };
        }
        if (w.kind === 'gpodder-settings') {
          const logged = inLog.get(w.requestId) ?? 0;
          const value = accountSettings.get(w.user.id)?.[settingKey(w.guid)];
          return w.status === 200
            ? { inLog: logged === 1, asAnswered: value === w.requestId }
            : { inLog: logged <= 1, asAnswered: (value === w.requestId) === (logged === 1) };
        }
        const row =
          w.kind === 'gpodder-add'
            ? byFeed.get(`${w.user.id} ${w.feedUrl}`)
            : subscription.get(`${w.user.id} ${w.guid}`);
        const logged = inLog.get(w.requestId) ?? 0;
        if (w.status === 200) {
          const asAnswered =
            w.kind === 'add'
              ? row?.feed_url === w.feedUrl &&
                (touchedAfter.has(`${w.user.id} ${w.guid}`) || row.is_subscribed)
              : w.kind === 'gpodder-add'
                ? row?.is_subscribed === true
                : row?.is_subscribed === false;
          return { inLog: logged === 1, asAnswered };
        }
        const atMostOnce =
          logged <= 1 && (w.kind === 'unsubscribe' || (row !== undefined) === (logged === 1));
        return { inLog: true, asAnswered: atMostOnce };
      };
      const wrong = writes
        .map((w) => ({ requestId: w.requestId, kind: w.kind, status: w.status, ...verdict(w) }))
        .filter((v) => !v.inLog || !v.asAnswered);
      expect(wrong).toEqual([]);
      // Each feed URL was written once: no subscription doubled.
      const feeds = rows.map((row) => `${row.user_id} ${row.feed_url}`);
      expect(feeds.length).toBe(new Set(feeds).size);
    } finally {
      await dataSource.destroy();
      await log.close();
    }

    // The sync face's actions: each acknowledged one applied once as answered, and sent again now,
    // each answers its first status and changes nothing.
    const syncActions = syncActionsOf(writes);
    expect(syncActions.filter((a) => a.acknowledged !== undefined).length).toBeGreaterThan(20);
    expect(
      syncActions.filter((a) => a.acknowledged !== undefined && a.attempts.length > 1).length,
    ).toBeGreaterThan(0);
    const live = alive(apis)[0]!.url;
    const syncEntities = async () =>
      new Map(
        await Promise.all(
          [...new Map(writes.map((w) => [w.user.id, w.user])).values()].map(
            async (user) => [user.id, await syncEntitiesOf(live, user)] as const,
          ),
        ),
      );
    const before = await syncEntities();
    expect(wrongSyncActions(syncActions, before)).toEqual([]);
    expect(await resendAcknowledged(live, syncActions)).toEqual([]);
    expect(await syncEntities()).toEqual(before);

    const replay = await runCli(['replay', '--verify', '--schema', 'castlog_drills_replay'], env);
    expect({ code: replay.code, stderr: replay.code === 0 ? '' : replay.stderr }).toEqual({
      code: 0,
      stderr: '',
    });
    console.log(
      `[drills] ${writes.length} writes: ${acknowledged.length} acknowledged ` +
        `(${acknowledged.filter((w) => w.kind === 'gpodder-add').length} gpodder.net uploads, ` +
        `${acknowledged.filter((w) => w.kind === 'gpodder-settings').length} gpodder.net settings, ` +
        `${acknowledged.filter((w) => w.sync !== undefined).length} sync actions, ` +
        `${syncActions.filter((a) => a.acknowledged !== undefined && a.attempts.length > 1).length} of them after a retry), ` +
        `${writes.filter((w) => w.status === 503).length} answered 503, ` +
        `${writes.filter((w) => w.status === 'cut').length} cut off; replay --verify: ${replay.stdout.trim()}`,
    );
  }, 240_000);

  it('leaves every subscribed feed fetched and named by the resolver that lived through every drill', async () => {
    const dataSource = await new DataSource({ type: 'postgres', url: databaseUrl }).initialize();
    try {
      const subscribed: { feed_url: string }[] = await dataSource.query(
        `SELECT DISTINCT feed_url FROM ${SCHEMA}.subscriptions WHERE user_id = ANY($1) AND is_subscribed`,
        [[...new Set(load.writes.map((w) => w.user.id))]],
      );
      expect(subscribed.length).toBeGreaterThan(50);
      const urls = subscribed.map((row) => row.feed_url);
      expect(urls.filter((url) => !url.startsWith(`${feeds.origin}/`))).toEqual([]);
      let unnamed: { url: string; title: string | null; outcome: string | null }[] = [];
      await resolver.run.explaining(
        poll(
          'the resolver to have fetched and named every subscribed feed',
          async () => {
            const rows: { url: string; title: string | null; outcome: string | null }[] =
              await dataSource.query(
                'SELECT url, title, outcome FROM castlog_feeds.feeds WHERE url = ANY($1)',
                [urls],
              );
            const named = new Map(rows.map((row) => [row.url, row]));
            unnamed = urls
              .map((url) => named.get(url) ?? { url, title: null, outcome: null })
              .filter(
                (row) => row.outcome !== 'fetched' || row.title !== `Drill ${new URL(row.url).pathname}`,
              );
            return unnamed.length === 0;
          },
          { timeoutMs: 120_000 },
        ).catch((error: unknown) => {
          throw new Error(`${String(error)}; not named: ${JSON.stringify(unnamed.slice(0, 5))}`);
        }),
      );
      expect(resolver.run.child.exitCode).toBeNull();
      console.log(`[drills] the resolver fetched and named all ${urls.length} subscribed feeds`);
    } finally {
      await dataSource.destroy();
    }
  }, 180_000);
});
