import { storedOffsets } from '@castlog/read-model';
import { describeDifference, verifyReplay } from '@castlog/replay';
import { appendBacklog } from '../support/backlog';
import { feed, guid } from '../support/contract';
import { uniqueName } from '../support/databases';
import { RunningChild, startChild } from '../support/processes';
import { CastlogUnderTest, childProjectorEnv, startCastlog, TestUser } from '../support/start-castlog';

const EVENTS = 20_000;
const USERS = 300;
/** Feeds per user: fewer than the user's events, so later POSTs match earlier subscriptions. */
const FEEDS_PER_USER = 40;
const WRITERS = 4;

interface Write {
  readonly user: TestUser;
  readonly guid: string;
  readonly feedUrl: string;
  readonly status: number;
}

/** A projector killed with SIGKILL halfway through a large backlog, then restarted: it resumes from
 * the offsets stored in PostgreSQL, applies no event twice (a POST applied twice would move the
 * subscription's and the user's clock, which the replay would not), loses no acknowledged write,
 * and ends equal to a replay of the log. The projector is the built app (`npm run build`). */
describe('a projector killed while it works through a backlog', () => {
  let app: CastlogUnderTest;
  let projectorEnv: NodeJS.ProcessEnv;
  const children: RunningChild[] = [];
  const projector = () => {
    const child = startChild('projector', projectorEnv);
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    app = await startCastlog({ projector: false });
    // The group gives the killed member's partitions to the restarted one after this. At `info`, a
    // wait that fails quotes the projectors' account of their start-up (`explaining`).
    projectorEnv = childProjectorEnv(app, { KAFKA_SESSION_TIMEOUT: '10s', LOG_LEVEL: 'info' });
  });
  afterAll(async () => {
    for (const child of children)
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await app?.close();
  });

  const storedNow = () => storedOffsets(app.runtime.database.dataSource, app.runtime.database.schema);
  const sum = (offsets: Map<number, number>) => [...offsets.values()].reduce((a, b) => a + b, 0);

  it('resumes from the offsets stored in PostgreSQL and ends equal to a replay', async () => {
    const { eventLog } = app.runtime;
    await appendBacklog(eventLog, { events: EVENTS, users: USERS, feedsPerUser: FEEDS_PER_USER });
    const backlog = sum(await eventLog.endOffsets());
    expect(backlog).toBe(EVENTS);

    const first = projector();
    // Acknowledged writes over HTTP, from before the crash until after the restart.
    const writes: Write[] = [];
    let writing = true;
    const writers = Array.from({ length: WRITERS }, async () => {
      const user = await app.freshUser();
      while (writing) {
        const [g, feedUrl] = [guid(), feed('acked')];
        const response = await app
          .as(user)
          .post('/v1/subscriptions', { subscriptions: [{ feed_url: feedUrl, guid: g }] });
        writes.push({ user, guid: g, feedUrl, status: response.status });
      }
    });

    await first.explaining(
      app.until(
        'the projector to be part-way through the backlog',
        async () => sum(await storedNow()) >= EVENTS / 10,
        60_000,
      ),
    );
    first.child.kill('SIGKILL');
    expect(await first.exited(10_000)).toEqual({ code: null, signal: 'SIGKILL' });
    const atCrash = await storedNow();
    expect(sum(atCrash)).toBeGreaterThan(0);
    expect(sum(atCrash)).toBeLessThan(backlog);

    const restartedAt = writes.length;
    const restarted = projector();
    // The killed consumer holds its partitions until its session times out (10 s here).
    await restarted.explaining(
      app.until(
        'the restarted projector to acknowledge writes again',
        async () => writes.slice(restartedAt).filter((w) => w.status === 200).length >= 5 * WRITERS,
        90_000,
      ),
    );
    writing = false;
    await Promise.all(writers);
    await app.untilProjectionAtEnd(60_000);

    // Every write answered 2xx is in the read model, as answered.
    const acknowledged = writes.filter((w) => w.status === 200);
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(writes.filter((w) => w.status !== 200 && w.status !== 503)).toEqual([]);
    const found: { user_id: string; id: string; feed_url: string }[] =
      await app.runtime.database.dataSource.query(
        `SELECT s.user_id, s.id, s.feed_url FROM "${app.runtime.database.schema}".subscriptions s
         JOIN unnest($1::text[], $2::uuid[]) AS w(user_id, id) ON s.user_id = w.user_id AND s.id = w.id`,
        [acknowledged.map((w) => w.user.id), acknowledged.map((w) => w.guid)],
      );
    expect(found.map((row) => `${row.id} ${row.feed_url}`).sort()).toEqual(
      acknowledged.map((w) => `${w.guid} ${w.feedUrl}`).sort(),
    );

    const differences = await verifyReplay({
      dataSource: app.runtime.database.dataSource,
      eventLog,
      schema: uniqueName('scratch'),
      liveSchema: app.runtime.database.schema,
      liveTimeoutMs: 10_000,
    });
    expect(differences.map(describeDifference)).toEqual([]);
  }, 180_000);
});
