import { DataSource } from 'typeorm';
import { createTestDatabase } from '../../../../test/support/databases';
import { readModelMigrations } from './read-model.migration';

const S = 'rm_upgrade';
const U = 'user-1';
const [A1, A2, B1] = [
  'a1000000-0000-4000-8000-000000000000',
  'a2000000-0000-4000-8000-000000000000',
  'b1000000-0000-4000-8000-000000000000',
];

/** A read model written before a subscription's first guid and creation feed_url moved to its row:
 * after the migration the views answer the rows the tables held, and the migration goes back. */
describe('read-model migration: one row per new subscription, on a read model written before it', () => {
  let dataSource: DataSource;
  const [tables, gpodder, oneRow] = readModelMigrations(S).map((Migration) => new Migration());
  const run = async (step: 'up' | 'down', migration: typeof tables) => {
    const runner = dataSource.createQueryRunner();
    try {
      await migration![step](runner);
    } finally {
      await runner.release();
    }
  };
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
