import { Config } from '@castlog/config';
import { ProjectionVersions, projectionSchema, projectorGroup, storedOffsets } from '@castlog/read-model';
import { describeDifference, verifyReplay } from '@castlog/replay';
import { Kafka, logLevel } from 'kafkajs';
import { appendBacklog } from '../support/backlog';
import { feed, guid } from '../support/contract';
import { uniqueName } from '../support/databases';
import { seededRandom } from '../support/seeded-random';
import { poll } from '../support/until';
import {
  CastlogUnderTest,
  EventLogKind,
  startCastlog,
  startProjector,
  TestUser,
} from '../support/start-castlog';

const BACKLOG = 40_000;
const USERS = 400;
const WRITERS = 4;

interface Write {
  readonly user: TestUser;
  readonly guid: string;
  readonly feedUrl: string;
  /** Status of the POST, then of the GET that followed it. */
  readonly status: number;
  readonly readBack: number;
  readonly readFeedUrl?: string;
  /** Phase of the bump when the POST was sent: before version 2 started, while it built, after the switch. */
  readonly phase: 'before' | 'building' | 'after';
}

interface Bump {
  readonly log: EventLogKind;
  /** Whether projector v1 stops as v2 starts (a rolling replacement, or the embedded process
   * restarted on a new release) rather than running beside it until the switch. */
  readonly replace: boolean;
}

/** A projection version bump under traffic: projector v1 serves reads; projector v2 starts, rebuilds
 * from offset 0 into schema `<base>_v2` under group `<group>-v2` while it keeps v1 current, and takes
 * over reads once it has caught up. Throughout, every write is acknowledged (no 503: no downtime)
 * and read back at once (read-your-writes across the switch); after it, with projector v1 stopped,
 * writes still succeed, which they can only if the API now waits on and reads version 2. */
describe.each<[string, Bump]>([
  ['beside the running v1 projector, on Kafka', { log: 'kafka', replace: false }],
  ['replacing the v1 projector, on the table log', { log: 'postgres', replace: true }],
])('a projection version bump %s', (_, { log, replace }) => {
  let app: CastlogUnderTest;
  const projectors = new Set<{ close(): Promise<void> }>();
  const projector = async (config: Config) => {
    const started = await startProjector(config);
    projectors.add(started);
    return started;
  };
  const stop = async (started: { close(): Promise<void> }) => {
    projectors.delete(started);
    await started.close();
  };

  beforeAll(async () => {
    app = await startCastlog({ log, projector: false });
  });
  afterAll(async () => {
    for (const started of projectors) await started.close().catch(() => undefined);
    await app?.close();
  });

  it('rebuilds into a new schema under a new group and switches reads with no downtime', async () => {
    const { eventLog, database } = app.runtime;
    const base = app.config.READ_MODEL_SCHEMA;
    const versions = new ProjectionVersions(database.dataSource, base);
    const sum = (offsets: Map<number, number>) => [...offsets.values()].reduce((a, b) => a + b, 0);

    await appendBacklog(eventLog, { events: BACKLOG, users: USERS, feedsPerUser: 60 });

    const v1 = await projector(app.config);
    await app.until(
      'version 1 to apply the backlog',
      async () => sum(await storedOffsets(database.dataSource, base)) >= BACKLOG,
      60_000,
    );
    expect((await versions.active())?.version).toBe(1);

    let phase: Write['phase'] = 'before';
    const writes: Write[] = [];
    let writing = true;
    const deletions: { user: TestUser; id: number }[] = [];
    const writers = Array.from({ length: WRITERS }, async () => {
      const user = await app.freshUser();
      const as = app.as(user);
      while (writing) {
        const [g, feedUrl, at] = [guid(), feed('bump'), phase];
        const posted = await as.post('/v1/subscriptions', {
          subscriptions: [{ feed_url: feedUrl, guid: g }],
        });
        const read = posted.status === 200 ? await as.get(`/v1/subscriptions/${g}`) : undefined;
        writes.push({
          user,
          guid: g,
          feedUrl,
          status: posted.status,
          readBack: read?.status ?? 0,
          readFeedUrl: read?.body?.feed_url,
          phase: at,
        });
        if (writes.length % 25 === 0) {
          const doomed = guid();
          await as.post('/v1/subscriptions', { subscriptions: [{ feed_url: feed('doomed'), guid: doomed }] });
          const deleted = await as.delete(`/v1/subscriptions/${doomed}`);
          if (deleted.status === 202) deletions.push({ user, id: deleted.body.deletion_id });
        }
      }
    });
    // Another device of the writers' users: a write, once acknowledged, stays visible to every
    // later read, whichever version serves it.
    const rereads: { write: Write; status: number; feedUrl?: string }[] = [];
    const next = seededRandom(Number(process.env.CASTLOG_TEST_SEED ?? 7));
    const reader = (async () => {
      await poll('a first acknowledged write', () => writes.some((w) => w.status === 200), { everyMs: 10 });
      while (writing) {
        const acknowledged = writes.filter((w) => w.status === 200);
        const write = acknowledged[Math.floor(next() * acknowledged.length)]!;
        const read = await app.as(write.user).get(`/v1/subscriptions/${write.guid}`);
        rereads.push({ write, status: read.status, feedUrl: read.body?.feed_url });
      }
    })();
    await app.until('writes before the bump', async () => writes.length >= 20, 30_000);

    if (replace) await stop(v1);
    phase = 'building';
    await projector({ ...app.config, PROJECTION_VERSION: 2 });
    await app.until(
      'version 2 to take over reads',
      async () => (await versions.active())?.version === 2,
      120_000,
    );
    const readyV2 = await app.until(
      'the API to read version 2',
      async () => {
        const ready = await app.anonymous.get('/health/ready');
        return ready.body.projection_version === 2 ? ready : false;
      },
      10_000,
    );
    expect(readyV2.status).toBe(200);
    phase = 'after';

    if (!replace) await stop(v1);
    const afterStop = writes.length;
    await app.until(
      'writes acknowledged with only version 2 projected',
      async () => writes.slice(afterStop).filter((w) => w.status === 200).length >= 10 * WRITERS,
      60_000,
    );
    writing = false;
    await Promise.all([...writers, reader]);

    // No downtime: every write in every phase acknowledged and read back as written.
    expect(writes.filter((w) => w.phase === 'building').length).toBeGreaterThan(0);
    expect(writes.filter((w) => w.status !== 200 || w.readBack !== 200)).toEqual([]);
    expect(writes.filter((w) => w.readFeedUrl !== w.feedUrl)).toEqual([]);
    expect(rereads.length).toBeGreaterThan(0);
    expect(
      rereads
        .filter((read) => read.status !== 200 || read.feedUrl !== read.write.feedUrl)
        .map((read) => `${read.write.guid} (${read.write.phase}): ${read.status}`),
    ).toEqual([]);

    // While version 2 was being built, version 1 went on being projected (by projector v2 itself
    // when it replaced projector v1): writes made then are in version 1's schema.
    const building = writes.filter((w) => w.phase === 'building');
    const [inVersion1] = await database.dataSource.query(
      `SELECT count(*)::int AS n FROM "${base}".subscriptions s
         JOIN unnest($1::text[], $2::uuid[]) AS w(user_id, id) ON s.user_id = w.user_id AND s.id = w.id`,
      [building.map((w) => w.user.id), building.map((w) => w.guid)],
    );
    expect(inVersion1.n).toBeGreaterThan(0);

    // Version 2 was built in its own schema by its own consumer group; version 1 is retired.
    const schema = projectionSchema(base, 2);
    expect(await versions.list()).toEqual([
      expect.objectContaining({ version: 1, schema: base, status: 'retired' }),
      expect.objectContaining({ version: 2, schema, status: 'active' }),
    ]);
    if (log === 'kafka')
      await expectConsumerGroups(app.config.KAFKA_BROKERS!, [
        app.config.PROJECTOR_GROUP,
        projectorGroup(app.config.PROJECTOR_GROUP, 2),
      ]);

    // Deletions accepted on either side of the switch finish, in the version that serves reads.
    expect(deletions.length).toBeGreaterThan(0);
    for (const { user, id } of deletions) {
      await app.until(
        `deletion ${id} to finish`,
        async () => (await app.as(user).get(`/v1/deletions/${id}`)).body.status === 'SUCCESS',
        30_000,
      );
    }

    // Every acknowledged write is in version 2, and version 2 equals a replay of the log.
    const acknowledged = writes.filter((w) => w.status === 200);
    const [found] = await database.dataSource.query(
      `SELECT count(*)::int AS n FROM "${schema}".subscriptions s
         JOIN unnest($1::text[], $2::uuid[], $3::text[]) AS w(user_id, id, feed_url)
           ON s.user_id = w.user_id AND s.id = w.id AND s.feed_url = w.feed_url`,
      [
        acknowledged.map((w) => w.user.id),
        acknowledged.map((w) => w.guid),
        acknowledged.map((w) => w.feedUrl),
      ],
    );
    expect(found.n).toBe(acknowledged.length);
    const differences = await verifyReplay({
      dataSource: database.dataSource,
      eventLog,
      schema: uniqueName('scratch'),
      liveSchema: schema,
      liveTimeoutMs: 30_000,
    });
    expect(differences.map(describeDifference)).toEqual([]);
  }, 300_000);
});

async function expectConsumerGroups(brokers: string, expected: string[]): Promise<void> {
  const admin = new Kafka({ brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const groups = (await admin.listGroups()).groups.map((group) => group.groupId);
    expect(groups).toEqual(expect.arrayContaining(expected));
  } finally {
    await admin.disconnect();
  }
}
