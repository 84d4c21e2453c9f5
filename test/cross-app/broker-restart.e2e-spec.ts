import { freePort, RunningKafka, startLocalKafka } from '@castlog/infra';
import { describeDifference, verifyReplay } from '@castlog/replay';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { feed, guid } from '../support/contract';
import { uniqueName } from '../support/databases';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

const WRITERS = 4;

interface Write {
  readonly user: TestUser;
  readonly guid: string;
  readonly feedUrl: string;
  readonly status: number;
}

/** The Kafka broker stopped and started again (same data directory, same port) while the API takes
 * writes: every request got 2xx and is in the read model once, or got 503 and is there at most once
 * (it may have reached the log); nothing is applied twice, and the read model equals a replay.
 * The broker is this test's own, so stopping it touches no other test. */
describe('a Kafka broker restart while the API takes writes', () => {
  let dir: string;
  let port: number;
  let broker: RunningKafka | undefined;
  let app: CastlogUnderTest;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'castlog-broker-'));
    await chmod(dir, 0o755);
    port = await freePort();
    broker = await startLocalKafka({ dir, port });
    app = await startCastlog({ env: { KAFKA_BROKERS: broker.brokers, READ_YOUR_WRITES_TIMEOUT: '10s' } });
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await broker?.stop();
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('loses no acknowledged write and applies none twice', async () => {
    const writes: Write[] = [];
    let writing = true;
    const writers = Array.from({ length: WRITERS }, async () => {
      const user = await app.freshUser();
      while (writing) {
        const [g, feedUrl] = [guid(), feed('restart')];
        const response = await app
          .as(user)
          .post('/v1/subscriptions', { subscriptions: [{ feed_url: feedUrl, guid: g }] });
        writes.push({ user, guid: g, feedUrl, status: response.status });
      }
    });
    const count = (status: number, from = 0) => writes.slice(from).filter((w) => w.status === status).length;

    await app.until('writes to be acknowledged', async () => count(200) >= 5 * WRITERS, 30_000);
    await broker!.stop();
    broker = undefined;
    const stoppedAt = writes.length;
    await app.until(
      'a write to be refused with 503 while the broker is down',
      async () => count(503, stoppedAt) > 0,
      90_000,
    );
    broker = await startLocalKafka({ dir, port });
    const restartedAt = writes.length;
    await app.until(
      'writes to be acknowledged again',
      async () => count(200, restartedAt) >= 5 * WRITERS,
      120_000,
    );
    writing = false;
    await Promise.all(writers);

    const { dataSource, schema } = app.runtime.database;
    const { eventLog } = app.runtime;
    await app.untilProjectionAtEnd(60_000);

    expect(writes.filter((w) => w.status !== 200 && w.status !== 503).map((w) => w.status)).toEqual([]);
    // How often each write's event is in the log, and whether its subscription is in the read model.
    const inLog = new Map<string, number>();
    await eventLog.readToEnd(async (batch) => {
      for (const { value } of batch.records) {
        if (value.type !== 'SubscriptionsAddRequested') continue;
        for (const item of value.items) inLog.set(String(item.guid), (inLog.get(String(item.guid)) ?? 0) + 1);
      }
    });
    const rows: { id: string; feed_url: string }[] = await dataSource.query(
      `SELECT s.id, s.feed_url FROM "${schema}".subscriptions s
         JOIN unnest($1::text[], $2::uuid[]) AS w(user_id, id) ON s.user_id = w.user_id AND s.id = w.id`,
      [writes.map((w) => w.user.id), writes.map((w) => w.guid)],
    );
    const inReadModel = new Map(rows.map((row) => [row.id, row.feed_url]));
    const outcome = (w: Write) => ({
      guid: w.guid,
      status: w.status,
      inLog: inLog.get(w.guid) ?? 0,
      inReadModel: inReadModel.get(w.guid) === w.feedUrl,
    });
    const acknowledged = writes.filter((w) => w.status === 200).map(outcome);
    expect(acknowledged).toEqual(acknowledged.map((w) => ({ ...w, inLog: 1, inReadModel: true })));
    const refused = writes.filter((w) => w.status === 503).map(outcome);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused).toEqual(
      refused.map((w) => ({ ...w, inLog: w.inLog > 0 ? 1 : 0, inReadModel: w.inLog > 0 })),
    );

    const differences = await verifyReplay({
      dataSource,
      eventLog,
      schema: uniqueName('scratch'),
      liveSchema: schema,
      liveTimeoutMs: 30_000,
    });
    expect(differences.map(describeDifference)).toEqual([]);
  }, 300_000);

  it('is ready again after the broker is SIGKILLed and restarted, though no write comes in, saying meanwhile that it rejoins', async () => {
    const readiness = async () => {
      const response = await fetch(new URL('/health/ready', app.url));
      return { status: response.status, body: await response.text() };
    };
    await app.until('ready before the kill', async () => (await readiness()).status === 200, 60_000);
    process.kill(broker!.pid, 'SIGKILL');
    broker = undefined;
    // The projector's consumer gives up on the dead broker and says so: the case this covers is a
    // consumer that failed, not one that never noticed.
    await app.until(
      'the projection reported down while the broker is away',
      async () => /projection v\d+ down/.test((await readiness()).body),
      120_000,
    );
    broker = await startLocalKafka({ dir, port });
    const back = Date.now();
    const laterAnswers: string[] = [];
    let last = await readiness();
    await app
      .until(
        'ready again with no write coming in',
        async () => {
          last = await readiness();
          if (last.status !== 200 && Date.now() - back > 2_000) laterAnswers.push(last.body);
          return last.status === 200;
        },
        90_000,
      )
      .catch((error: unknown) => {
        throw new Error(`${String(error)}; last answer: ${last.status} ${last.body}`);
      });
    // Kafka holds the consumer's new join until the group's previous member times out (30 s here),
    // so the lane stays down well past the broker's return; meanwhile it says why, not the old
    // connection error.
    const laneReasons = laterAnswers.flatMap((body) => {
      const reason = /projection v\d+ down for \d+ s \((.*)/.exec(body)?.[1];
      return reason === undefined ? [] : [reason];
    });
    expect(laneReasons.length).toBeGreaterThan(0);
    expect(
      laneReasons.filter((reason) => !reason.startsWith('kafka answers again; rejoining consumer group')),
    ).toEqual([]);
  }, 300_000);
});
