import { Database } from '@castlog/read-model';
import { openDatabaseAt } from '@castlog/runtime';
import { randomUUID } from 'node:crypto';
import { createTestDatabase } from '../../../../test/support/databases';
import { insertSubscription } from '../testing/subscriptions';
import { FeedCatalog } from './feed-catalog';

const T = 1_700_000_000_000;
const HOUR = 3_600_000;
const feed = (name: string) => `https://${name}.example/rss`;

/** The catalog's statements against a database migrated as castlog migrates it. */
describe('FeedCatalog', () => {
  let database: Database;
  let catalog: FeedCatalog;

  const subscribe = (user: string, feedUrl: string, options: { deleted?: number } = {}) =>
    insertSubscription(database.dataSource, user, feedUrl, { ...options, at: T });
  const row = async (url: string) =>
    (await database.dataSource.query(`SELECT * FROM castlog_feeds.feeds WHERE url = $1`, [url]))[0];

  beforeAll(async () => {
    database = await openDatabaseAt(await createTestDatabase('feed_catalog'), 'castlog', 4);
    catalog = new FeedCatalog(database.dataSource, { schema: 'castlog' });
  });
  afterAll(() => database.close());
  beforeEach(() => database.dataSource.query(`TRUNCATE castlog_feeds.feeds, castlog_feeds.log_offsets`));

  it('learns each feed once, due at once, with the partition position it learned up to', async () => {
    expect(await catalog.learnedUpTo(0)).toBe(0);
    expect(await catalog.learn([feed('a'), feed('b'), feed('a')], T, 0, 5)).toBe(2);
    expect(await catalog.learn([feed('a'), feed('c')], T + 1000, 0, 9)).toBe(1);
    expect(await catalog.learnedUpTo(0)).toBe(9);
    // A redelivered batch moves no position back.
    await catalog.learn([feed('a')], T + 2000, 0, 5);
    expect(await catalog.learnedUpTo(0)).toBe(9);
    expect(await catalog.learnedUpTo(1)).toBe(0);
    expect((await row(feed('a'))).first_seen).toEqual(new Date(T));
    expect(await catalog.backlog(T + 1000)).toEqual({ known: 3, due: 3, oldestDueMs: T });
  });

  it('claims due feeds, longest due first, once until their lease ends', async () => {
    await catalog.learn([feed('old')], T, 0, 1);
    await catalog.learn([feed('new')], T + 1000, 0, 2);
    await catalog.learn([feed('later')], T + 10 * HOUR, 0, 3);
    expect((await catalog.claimDue(T + 2000, 1, HOUR)).map((due) => due.url)).toEqual([feed('old')]);
    expect(await catalog.claimDue(T + 2000, 10, HOUR)).toEqual([{ url: feed('new'), failures: 0 }]);
    expect(await catalog.claimDue(T + 2000, 10, HOUR)).toEqual([]);
    // The lease ended without a record (a crash): claimable again.
    expect((await catalog.claimDue(T + 2 * HOUR, 10, HOUR)).map((due) => due.url).sort()).toEqual(
      [feed('new'), feed('old')].sort(),
    );
  });

  it('records a fetch, a 304 keeping what it had, and failures that keep the metadata', async () => {
    await catalog.learn([feed('a')], T, 0, 1);
    const metadata = { title: 'A show', episodeCount: 3, newestEpisodeAt: new Date(T - HOUR), author: 'Ann' };
    const validators = { etag: '"v1"', lastModified: 'Tue, 14 Nov 2023 22:13:20 GMT' };
    expect(await catalog.record(feed('a'), { outcome: 'fetched', metadata, validators }, T, T + HOUR)).toBe(
      0,
    );
    expect(await catalog.claimDue(T + HOUR, 10, HOUR)).toEqual([
      { url: feed('a'), failures: 0, ...validators },
    ]);
    await catalog.record(feed('a'), { outcome: 'not-modified', validators: {} }, T + HOUR, T + 2 * HOUR);
    expect(await row(feed('a'))).toMatchObject({ title: 'A show', etag: '"v1"', outcome: 'not-modified' });
    expect(await catalog.record(feed('a'), { outcome: 'timeout', detail: 'no answer in 10 s' }, T, T)).toBe(
      1,
    );
    expect(await catalog.record(feed('a'), { outcome: 'malformed', detail: 'not XML' }, T, T)).toBe(2);
    expect(await row(feed('a'))).toMatchObject({
      title: 'A show',
      author: 'Ann',
      episode_count: 3,
      newest_episode_at: new Date(T - HOUR),
      outcome: 'malformed',
      outcome_detail: 'not XML',
      failures: 2,
      etag: null,
      last_modified: null,
    });
  });

  it('shows a user the titles of the feeds they hold only, by the URL as they spelled it', async () => {
    const [alice, bob] = ['user-alice', 'user-bob'];
    await subscribe(alice, 'HTTPS://Shared.example/rss#top');
    await subscribe(bob, feed('shared'));
    await subscribe(bob, feed('private'));
    await subscribe(alice, feed('gone'), { deleted: T });
    await catalog.learn([feed('shared'), feed('private'), feed('gone'), feed('untitled')], T, 0, 1);
    for (const [url, title] of [
      [feed('shared'), 'Shared'],
      [feed('private'), 'Private'],
      [feed('gone'), 'Gone'],
    ] as const)
      await catalog.record(
        url,
        { outcome: 'fetched', metadata: { title, episodeCount: 0 }, validators: {} },
        T,
        T,
      );
    const asked = ['HTTPS://Shared.example/rss#top', feed('private'), feed('gone'), feed('untitled')];
    expect(await catalog.titlesFor(alice, asked)).toEqual(
      new Map([['HTTPS://Shared.example/rss#top', 'Shared']]),
    );
    expect(await catalog.titlesFor(bob, [feed('private')])).toEqual(new Map([[feed('private'), 'Private']]));
    expect(await catalog.titlesFor(bob, [])).toEqual(new Map());
  });

  it("names feeds a page read from its user's own list, in any spelling, without asking who holds them", async () => {
    await catalog.learn([feed('paged'), feed('paged-untitled')], T, 0, 1);
    await catalog.record(
      feed('paged'),
      { outcome: 'fetched', metadata: { title: 'Paged', episodeCount: 0 }, validators: {} },
      T,
      T,
    );
    const spelled = `${feed('paged').replace('https://', 'HTTPS://')}#top`;
    expect(await catalog.titlesOfHeld([spelled, feed('paged-untitled'), feed('unknown')])).toEqual(
      new Map([[spelled, 'Paged']]),
    );
    expect(await catalog.titlesOfHeld([])).toEqual(new Map());
  });

  it('names the feeds of a list as long as the largest upload (10,000 URLs)', async () => {
    const urls = Array.from({ length: 10_000 }, (_, i) => feed(`many${i}`));
    await database.dataSource.query(
      `INSERT INTO castlog.subscriptions (user_id, id, feed_url, is_subscribed, subscription_changed, latest_guid,
                                          created, created_feed_url, sync_id, subscribed_at, state_time,
                                          identity_time, last_updated, sync_cursor)
       SELECT 'user-dave', id, url, true, $2, id, $2, url, gen_random_uuid(), 0, 0, 0, 0, 0
         FROM (SELECT gen_random_uuid() AS id, url FROM unnest($1::text[]) AS urls (url)) subscribed`,
      [urls, T],
    );
    await catalog.learn(urls.slice(0, 2), T, 0, 1);
    await catalog.record(
      urls[1]!,
      { outcome: 'fetched', metadata: { title: 'Two', episodeCount: 0 }, validators: {} },
      T,
      T,
    );
    const named = await catalog.withTitles('user-dave', urls);
    expect(named).toHaveLength(10_000);
    expect(named.slice(0, 3)).toEqual([{ url: urls[0] }, { url: urls[1], title: 'Two' }, { url: urls[2] }]);
  });

  it('finds the subscriptions still on a feed, by user, for a move; and where a feed moved', async () => {
    const [ann, ben] = [`ann-${randomUUID()}`, `ben-${randomUUID()}`];
    await subscribe(ann, 'HTTPS://Moving.example/rss');
    // Ann's second subscription took the feed's URL later (a PATCH of new_feed_url).
    await subscribe(ann, feed('before'));
    await database.dataSource.query(
      `WITH later AS (UPDATE castlog.subscriptions SET feed_url = $2 WHERE user_id = $1 AND created_feed_url = $3
                      RETURNING user_id, id)
       INSERT INTO castlog.subscription_later_feed_urls (user_id, normalized_feed_url, subscription_id)
       SELECT user_id, $4, id FROM later`,
      [ann, 'https://moving.example/rss#second', feed('before'), feed('moving')],
    );
    await subscribe(ben, feed('moving'));
    await subscribe(`deleted-${randomUUID()}`, feed('moving'), { deleted: T });
    // One created with the feed but since on another URL is not on it any more.
    await subscribe(`cy-${randomUUID()}`, feed('moving'));
    await database.dataSource.query(
      `UPDATE castlog.subscriptions SET feed_url = $1 WHERE user_id LIKE 'cy-%'`,
      [feed('elsewhere')],
    );
    const found = await catalog.subscriptionsOn(feed('moving'));
    expect([...found.keys()].sort()).toEqual([ann, ben].sort());
    expect(found.get(ann)).toHaveLength(2);
    expect(found.get(ben)).toHaveLength(1);
    await catalog.learn([feed('moving')], T, 0, 1);
    expect(await catalog.movedTo(feed('moving'))).toBeUndefined();
    await catalog.record(
      feed('moving'),
      { outcome: 'not-modified', validators: {}, movedTo: feed('home') },
      T,
      T + HOUR,
    );
    expect(await catalog.movedTo(feed('moving'))).toBe(feed('home'));
  });

  it('sweeps the feeds nobody holds any more, sparing those learned within the grace period', async () => {
    await subscribe('user-carol', feed('held'));
    await subscribe('user-carol', feed('deleted'), { deleted: T });
    await catalog.learn([feed('held'), feed('deleted'), feed('dropped')], T, 0, 1);
    await catalog.learn([feed('fresh')], T + HOUR, 0, 2);
    expect(await catalog.sweep(T + HOUR)).toBe(2);
    expect((await catalog.backlog(T + HOUR)).known).toBe(2);
    expect(await row(feed('held'))).toBeDefined();
    expect(await row(feed('fresh'))).toBeDefined();
  });
});
