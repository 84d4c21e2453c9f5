import { syncIdOf } from '@castlog/domain';
import { DataSource, MigrationInterface } from 'typeorm';
import { createTestDatabase } from '../../../../test/support/databases';
import { readModelMigrations } from './read-model.migration';

const S = 'rm_upgrade';
const U = 'user-1';
const [A1, A2, B1] = [
  'a1000000-0000-4000-8000-000000000000',
  'a2000000-0000-4000-8000-000000000000',
  'b1000000-0000-4000-8000-000000000000',
];

/** Runs one migration's `up` or `down` on a query runner of its own. */
async function runMigration(dataSource: DataSource, step: 'up' | 'down', migration: MigrationInterface) {
  const runner = dataSource.createQueryRunner();
  try {
    await migration[step](runner);
  } finally {
    await runner.release();
  }
}

/** A read model written before a subscription's first guid and creation feed_url moved to its row:
 * after the migration the views answer the rows the tables held, and the migration goes back. */
describe('read-model migration: one row per new subscription, on a read model written before it', () => {
  let dataSource: DataSource;
  const [tables, gpodder, oneRow] = readModelMigrations(S).map((Migration) => new Migration());
  const run = (step: 'up' | 'down', migration: typeof tables) => runMigration(dataSource, step, migration!);
  const guids = () =>
    dataSource.query(
      `SELECT guid, subscription_id, since::int, position FROM ${S}.subscription_guids
        ORDER BY subscription_id, position`,
    );
  const feedUrls = () =>
    dataSource.query(
      `SELECT normalized_feed_url, subscription_id FROM ${S}.subscription_feed_urls ORDER BY normalized_feed_url`,
    );

  beforeAll(async () => {
    dataSource = new DataSource({ type: 'postgres', url: await createTestDatabase('read_model_upgrade') });
    await dataSource.initialize();
    await run('up', tables);
    await run('up', gpodder);
    // A (guids A1 then A2, feed URLs a and a2), B (guid B1, feed URL b, then a taken from A).
    await dataSource.query(
      `INSERT INTO ${S}.subscriptions
         (user_id, id, feed_url, is_subscribed, subscription_changed, guid_changed, deleted, merged_into, deletion_id, latest_guid)
       VALUES ($1, $2, 'https://a2.example/rss', true, 300, 200, NULL, NULL, NULL, $3),
              ($1, $4, 'https://a.example/rss', true, 400, NULL, NULL, NULL, NULL, $4)`,
      [U, A1, A2, B1],
    );
    await dataSource.query(
      `INSERT INTO ${S}.subscription_guids (user_id, guid, subscription_id, since, position)
       VALUES ($1, $2, $2, 100, 0), ($1, $3, $2, 200, 1), ($1, $4, $4, 150, 0)`,
      [U, A1, A2, B1],
    );
    await dataSource.query(
      `INSERT INTO ${S}.subscription_feed_urls (user_id, normalized_feed_url, subscription_id)
       VALUES ($1, 'https://a.example/rss', $3), ($1, 'https://a2.example/rss', $2), ($1, 'https://b.example/rss', $3)`,
      [U, A1, B1],
    );
  });
  afterAll(() => dataSource?.destroy());

  it('keeps every guid and feed_url readable through the views, and moves the first guid onto the row', async () => {
    const [guidsBefore, feedUrlsBefore] = [await guids(), await feedUrls()];
    expect(guidsBefore).toHaveLength(3);
    await run('up', oneRow);
    expect(await guids()).toEqual(guidsBefore);
    expect(await feedUrls()).toEqual(feedUrlsBefore);
    expect(
      await dataSource.query(`SELECT id, created::int, created_feed_url FROM ${S}.subscriptions ORDER BY id`),
    ).toEqual([
      { id: A1, created: 100, created_feed_url: null },
      { id: B1, created: 150, created_feed_url: null },
    ]);
    expect(await dataSource.query(`SELECT guid FROM ${S}.subscription_later_guids`)).toEqual([{ guid: A2 }]);

    await run('down', oneRow);
    expect(await guids()).toEqual(guidsBefore);
    expect(await feedUrls()).toEqual(feedUrlsBefore);
    await run('up', oneRow);
    expect(await guids()).toEqual(guidsBefore);
  });
});

/** A read model written before the sync face: after the migration each row has the sync_id
 * `syncIdOf` gives it, the other sync fields as the stored columns tell them, and the user's sync
 * clock its last cursor; and the migration goes back. */
describe('read-model migration: the sync face, on a read model written before it', () => {
  const S2 = 'rm_sync_upgrade';
  let dataSource: DataSource;
  const migrations = readModelMigrations(S2).map((Migration) => new Migration());
  const syncFace = migrations[3]!;
  const run = (step: 'up' | 'down', migration: MigrationInterface) =>
    runMigration(dataSource, step, migration);
  /** Non-ASCII user ids: the SQL hashes their UTF-8 bytes, as `syncIdOf` does. */
  const [U1, U2, U3, NOBODY] = ['usér-ü 用户 🎙', "o'brien", 'user-busy', 'user-nobody'];
  const [A, B, C, D, E] = ['a', 'b', 'c', 'd', 'e'].map((x) => `${x.repeat(8)}-0000-4000-8000-000000000000`);
  const columns = async (table: string) =>
    (
      await dataSource.query(
        `SELECT column_name AS name FROM information_schema.columns
          WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
        [S2, table],
      )
    ).map((row: { name: string }) => row.name);

  beforeAll(async () => {
    dataSource = new DataSource({
      type: 'postgres',
      url: await createTestDatabase('read_model_sync_upgrade'),
    });
    await dataSource.initialize();
    for (const migration of migrations.slice(0, 3)) await run('up', migration);
    const insert = (rows: string) =>
      dataSource.query(
        `INSERT INTO ${S2}.subscriptions (user_id, id, feed_url, is_subscribed, subscription_changed, guid_changed,
                                          deleted, merged_into, deletion_id, latest_guid, created)
         VALUES ${rows}`,
        [U1, U2, A, B, C, D, E],
      );
    // U1: A and B created at 100 (one change time: id order), C unsubscribed at 300, D merged into A
    // at 200, E deleted at 400. U2: the same ids, A re-guided at 250.
    await insert(`
      ($1, $3, 'https://a.example/', true, 100, NULL, NULL, NULL, NULL, $3, 100),
      ($1, $4, 'https://b.example/', true, 100, NULL, NULL, NULL, NULL, $4, 100),
      ($1, $5, 'https://c.example/', false, 300, NULL, NULL, NULL, NULL, $5, 50),
      ($1, $6, 'https://d.example/', true, 60, 200, NULL, $3, NULL, $6, 60),
      ($1, $7, 'https://e.example/', false, 400, NULL, 400, NULL, 9, $7, 70),
      ($2, $3, 'https://a.example/', true, 100, 250, NULL, NULL, NULL, $4, 100)`);
    // U3: 1,001 subscriptions changed in one millisecond (1), then one in the next (2): the cursors of
    // the first run past 2's, and the last one's comes after them.
    await dataSource.query(
      `INSERT INTO ${S2}.subscriptions (user_id, id, feed_url, is_subscribed, subscription_changed, latest_guid, created)
       SELECT $1, g.id, 'https://busy.example/' || n, true, CASE WHEN n < 1001 THEN 1 ELSE 2 END, g.id, 1
         FROM generate_series(0, 1001) AS n
        CROSS JOIN LATERAL (SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid AS id) g`,
      [U3],
    );
    await dataSource.query(
      `INSERT INTO ${S2}.user_clocks (user_id, last_instant) VALUES ($1, 400), ($2, 250), ($3, 2), ($4, 7)`,
      [U1, U2, U3, NOBODY],
    );
    await run('up', syncFace);
  });
  afterAll(() => dataSource?.destroy());

  it('gives every row the sync_id syncIdOf gives it, non-ASCII user ids included', async () => {
    const rows: { user_id: string; id: string; sync_id: string }[] = await dataSource.query(
      `SELECT user_id, id, sync_id FROM ${S2}.subscriptions`,
    );
    expect(rows).toHaveLength(6 + 1002);
    for (const row of rows) expect(row.sync_id).toBe(syncIdOf(row.user_id, row.id));
    expect(new Set(rows.map((row) => row.sync_id)).size).toBe(rows.length);
  });

  it("fills the other sync fields from the stored columns, the cursors increasing by each user's changes", async () => {
    const ms = (instant: number | null) => (instant === null ? null : instant * 1000);
    const expected = (
      userId: string,
      id: string,
      [subscribed, unsubscribed, state, identity, updated]: readonly [
        number,
        number | null,
        number,
        number,
        number,
      ],
      cursor: number,
    ) => ({
      user_id: userId,
      id,
      subscribed_at: ms(subscribed),
      unsubscribed_at: ms(unsubscribed),
      state_time: ms(state),
      identity_time: ms(identity),
      last_updated: ms(updated),
      last_client_id: null,
      sync_cursor: cursor,
    });
    expect(
      await dataSource.query(
        `SELECT user_id, id, subscribed_at::float8 AS subscribed_at, unsubscribed_at::float8 AS unsubscribed_at,
                state_time::float8 AS state_time, identity_time::float8 AS identity_time,
                last_updated::float8 AS last_updated, last_client_id, sync_cursor::float8 AS sync_cursor
           FROM ${S2}.subscriptions WHERE user_id <> $1 ORDER BY user_id = $2, sync_cursor`,
        [U3, U2],
      ),
    ).toEqual([
      expected(U1, A, [100, null, 100, 100, 100], 100_000),
      expected(U1, B, [100, null, 100, 100, 100], 100_001),
      expected(U1, D, [60, 200, 60, 200, 200], 200_000),
      expected(U1, C, [50, 300, 300, 50, 300], 300_000),
      expected(U1, E, [70, 400, 400, 70, 400], 400_000),
      expected(U2, A, [100, null, 100, 250, 250], 250_000),
    ]);
    const busy: { sync_cursor: number }[] = await dataSource.query(
      `SELECT sync_cursor::float8 AS sync_cursor FROM ${S2}.subscriptions WHERE user_id = $1 ORDER BY id`,
      [U3],
    );
    expect(busy.map((row) => row.sync_cursor)).toEqual(Array.from({ length: 1002 }, (_, n) => 1000 + n));
  });

  it("sets each user's sync clock to the user's last cursor (0 without subscriptions), and makes the sync tables", async () => {
    const clocks: { user_id: string }[] = await dataSource.query(
      `SELECT user_id, last_instant::float8 AS last_instant, sync_clock::float8 AS sync_clock FROM ${S2}.user_clocks`,
    );
    expect(clocks.sort((a, b) => (a.user_id < b.user_id ? -1 : 1))).toEqual([
      { user_id: U2, last_instant: 250, sync_clock: 250_000 },
      { user_id: U3, last_instant: 2, sync_clock: 2001 },
      { user_id: NOBODY, last_instant: 7, sync_clock: 0 },
      { user_id: U1, last_instant: 400, sync_clock: 400_000 },
    ]);
    // Only the fields the domain allows to be null may be.
    await expect(
      dataSource.query(`UPDATE ${S2}.subscriptions SET sync_cursor = NULL WHERE user_id = $1`, [U2]),
    ).rejects.toThrow(/null value in column "sync_cursor"/);
    await expect(
      dataSource.query(`UPDATE ${S2}.subscriptions SET sync_id = $2 WHERE user_id = $1 AND id = $3`, [
        U1,
        syncIdOf(U1, B),
        A,
      ]),
    ).rejects.toThrow(/duplicate key value/);
    await expect(
      dataSource.query(
        `INSERT INTO ${S2}.sync_actions (user_id, action_id, status, fingerprint) VALUES ($1, $2, 'lost', 'f')`,
        [U1, A],
      ),
    ).rejects.toThrow(/check constraint/);
  });

  it('goes back to the columns and tables there were, and up again', async () => {
    const [subscriptions, clocks] = [await columns('subscriptions'), await columns('user_clocks')];
    await run('down', syncFace);
    expect(await columns('subscriptions')).toEqual(
      subscriptions.filter(
        (name: string) =>
          ![
            'sync_id',
            'subscribed_at',
            'unsubscribed_at',
            'state_time',
            'identity_time',
            'last_updated',
            'last_client_id',
            'sync_cursor',
          ].includes(name),
      ),
    );
    expect(await columns('user_clocks')).toEqual(['user_id', 'last_instant']);
    expect(await columns('sync_actions')).toEqual([]);
    await run('up', syncFace);
    expect(await columns('subscriptions')).toEqual(subscriptions);
    expect(await columns('user_clocks')).toEqual(clocks);
  });
});

/** gpodder.net's flattr action: refused by the episode_actions table before the migration, stored
 * after it; going back keeps the rows stored and refuses new ones. */
describe('read-model migration: the flattr episode action', () => {
  const S3 = 'rm_flattr_upgrade';
  let dataSource: DataSource;
  const migrations = readModelMigrations(S3).map((Migration) => new Migration());
  const flattr = migrations[5]!;
  const run = (step: 'up' | 'down', migration: MigrationInterface) =>
    runMigration(dataSource, step, migration);
  const insert = (sequence: number, action: string) =>
    dataSource.query(
      `INSERT INTO ${S3}.episode_actions (user_id, sequence, ordinal, received_at, podcast, episode, action, "timestamp")
       VALUES ('u', $1, 0, 1, 'https://p.example/rss', 'https://p.example/1.mp3', $2, '2024-01-01T00:00:00')`,
      [sequence, action],
    );

  beforeAll(async () => {
    dataSource = new DataSource({ type: 'postgres', url: await createTestDatabase('read_model_flattr') });
    await dataSource.initialize();
    for (const migration of migrations.slice(0, 5)) await run('up', migration);
  });
  afterAll(() => dataSource?.destroy());

  it('stores flattr once migrated, and refuses other unknown actions still', async () => {
    await expect(insert(1, 'flattr')).rejects.toThrow(/check constraint/);
    await run('up', flattr);
    await insert(1, 'flattr');
    await expect(insert(2, 'stream')).rejects.toThrow(/check constraint/);
    await run('down', flattr);
    await expect(insert(3, 'flattr')).rejects.toThrow(/check constraint/);
    expect(await dataSource.query(`SELECT action FROM ${S3}.episode_actions`)).toEqual([
      { action: 'flattr' },
    ]);
    await run('up', flattr);
    await insert(3, 'flattr');
  });
});

/** A device's last use: unknown (NULL) for the devices stored before, and the column goes back. */
describe("read-model migration: a device's last use", () => {
  const S4 = 'rm_device_last_use';
  let dataSource: DataSource;
  const migrations = readModelMigrations(S4).map((Migration) => new Migration());
  const lastUse = migrations[6]!;
  const run = (step: 'up' | 'down', migration: MigrationInterface) =>
    runMigration(dataSource, step, migration);
  const hasColumn = async () =>
    (
      await dataSource.query(
        `SELECT 1 FROM information_schema.columns
          WHERE table_schema = $1 AND table_name = 'devices' AND column_name = 'last_used'`,
        [S4],
      )
    ).length === 1;

  beforeAll(async () => {
    dataSource = new DataSource({ type: 'postgres', url: await createTestDatabase('read_model_last_use') });
    await dataSource.initialize();
    for (const migration of migrations.slice(0, 6)) await run('up', migration);
    await dataSource.query(
      `INSERT INTO ${S4}.devices (user_id, id, caption, type) VALUES ('u', 'phone', 'Phone', 'mobile')`,
    );
  });
  afterAll(() => dataSource?.destroy());

  it('leaves the last use of the devices stored before unknown, stores it after, and goes back', async () => {
    expect(lastUse.name).toBe(`ReadModel_${S4}_1732400000016`);
    await run('up', lastUse);
    expect(await dataSource.query(`SELECT id, last_used FROM ${S4}.devices`)).toEqual([
      { id: 'phone', last_used: null },
    ]);
    await dataSource.query(
      `INSERT INTO ${S4}.devices (user_id, id, caption, type, last_used) VALUES ('u', 'tv', '', 'other', 1677160800000)`,
    );
    expect(await dataSource.query(`SELECT id, last_used::text FROM ${S4}.devices ORDER BY id`)).toEqual([
      { id: 'phone', last_used: null },
      { id: 'tv', last_used: '1677160800000' },
    ]);
    await run('down', lastUse);
    expect(await hasColumn()).toBe(false);
    expect(await dataSource.query(`SELECT id FROM ${S4}.devices ORDER BY id`)).toEqual([
      { id: 'phone' },
      { id: 'tv' },
    ]);
    await run('up', lastUse);
    expect(await hasColumn()).toBe(true);
  });
});
