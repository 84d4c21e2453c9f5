import { poolOf } from '@castlog/read-model';
import { Readable } from 'node:stream';
import { Client, Pool, PoolClient } from 'pg';
import { appendBacklog } from '../../../../test/support/backlog';
import { projectionAtEnd } from '../../../../test/support/projection';
import { CastlogUnderTest, startCastlog } from '../../../../test/support/start-castlog';
import { main, WithLog, withDatabaseAndLog, WithStore } from '../main';

const EVENTS = 6_000;
const USERS = 300;
const FEEDS_PER_USER = 12;
/** Every 8th event of a user a DELETE: hundreds of deletions among the backlog. */
const DELETE_EVERY = 8;

const noStore: WithStore = async () => {
  throw new Error('a replay opens no auth store');
};

/** What the CLI's read-model pool went through: whether a checkout ever found every connection
 * taken, and the clients it handed out. */
interface PoolWatch {
  waited: boolean;
  readonly clients: Set<PoolClient>;
  /** Called at each checkout; may break the client before its first query. */
  onCheckout?: (client: PoolClient, checkouts: number) => Promise<void> | undefined;
}

function watchPool(pool: Pool, watch: PoolWatch): void {
  const connect = pool.connect.bind(pool) as () => Promise<PoolClient>;
  let checkouts = 0;
  const checkout = async () => {
    if (pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10)) watch.waited = true;
    const client = await connect();
    watch.clients.add(client);
    const before = watch.onCheckout?.(client, (checkouts += 1));
    if (before) {
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as { query: unknown }).query = async (...args: unknown[]) => {
        (client as { query: unknown }).query = query;
        await before;
        return query(...args);
      };
    }
    return client;
  };
  // TypeORM checks out with a callback, inTransaction without.
  type Callback = (error: Error | undefined, client?: PoolClient, release?: () => void) => void;
  pool.connect = ((callback?: Callback) => {
    if (!callback) return checkout();
    checkout().then(
      (client) => callback(undefined, client, () => client.release()),
      (error: Error) => callback(error),
    );
    return undefined;
  }) as Pool['connect'];
}

/** The stack of a fault drill, quiet: a live castlog (12 partitions) that has applied a backlog of
 * many users with hundreds of deletions, each finalized by its saga. */
describe('castlog replay --verify on a backlog of many users with deletions', () => {
  let app: CastlogUnderTest;

  beforeAll(async () => {
    app = await startCastlog({ env: { KAFKA_PARTITIONS: '12' } });
    const { deletions } = await appendBacklog(app.runtime.eventLog, {
      events: EVENTS,
      users: USERS,
      feedsPerUser: FEEDS_PER_USER,
      deleteEvery: DELETE_EVERY,
    });
    expect(deletions).toBeGreaterThan(500);
    const { dataSource, schema } = app.runtime.database;
    await app.until(
      'the backlog and the deletion saga to be done',
      async () => {
        const [row] = await dataSource.query(
          `SELECT (SELECT count(*) FROM ${schema}.request_outcomes)::int AS applied,
                  (SELECT count(*) FROM ${schema}.deletions WHERE status = 'PENDING')::int AS pending`,
        );
        return (
          row.applied >= EVENTS &&
          row.pending === 0 &&
          (await projectionAtEnd(app.runtime.eventLog, dataSource, schema))
        );
      },
      120_000,
    );
  }, 180_000);
  afterAll(() => app?.close());

  /** `castlog replay --verify` as the CLI runs it, its read-model pool watched. */
  async function replayVerify(watch: PoolWatch) {
    const stdout = { text: '', write: (chunk: string) => (stdout.text += chunk) };
    const stderr = { text: '', write: (chunk: string) => (stderr.text += chunk) };
    const env = {
      DATABASE_URL: app.config.DATABASE_URL,
      KAFKA_BROKERS: app.config.KAFKA_BROKERS,
      KAFKA_TOPIC: app.config.KAFKA_TOPIC,
      KAFKA_PARTITIONS: String(app.config.KAFKA_PARTITIONS),
      READ_MODEL_SCHEMA: app.config.READ_MODEL_SCHEMA,
    };
    const withLog: WithLog = (body) =>
      withDatabaseAndLog(env)((opened, config) => {
        watchPool(poolOf(opened.dataSource), watch);
        return body(opened, config);
      });
    const io = { stdout, stderr, stdin: Readable.from([]) };
    const code = await main(['node', 'castlog', 'replay', '--verify'], io, noStore, withLog);
    return { code, stdout: stdout.text, stderr: stderr.text };
  }

  it('ends equal with exit status 0, no transaction ever waiting for a connection', async () => {
    const watch: PoolWatch = { waited: false, clients: new Set() };
    const result = await replayVerify(watch);
    expect(result).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^replay equals the live read model: \d+ events, \d+ subscriptions\n$/),
      stderr: expect.not.stringContaining('castlog:'),
    });
    expect(watch.waited).toBe(false);
  });

  it('rides out its connections dropped in the middle of the replay', async () => {
    const admin = new Client({ connectionString: app.databaseUrl });
    await admin.connect();
    try {
      const watch: PoolWatch = {
        waited: false,
        clients: new Set(),
        // Once transactions run, every backend the CLI has is terminated, as a failover does.
        onCheckout: (_client, checkouts) =>
          checkouts === 8
            ? admin
                .query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [
                  [...watch.clients].map((c) => (c as unknown as { processID: number }).processID),
                ])
                .then(() => undefined)
            : undefined,
      };
      const result = await replayVerify(watch);
      expect(result).toEqual({
        code: 0,
        stdout: expect.stringMatching(/^replay equals the live read model/),
        stderr: expect.stringMatching(/\nreplay: out of reach: .+; trying again in \d+\.\d s\n/),
      });
    } finally {
      await admin.end();
    }
  });
});
