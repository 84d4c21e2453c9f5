import { randomUUID } from 'node:crypto';
import { Database } from '../database';
import { openReadModelTestDatabase } from '../testing/read-model-database';
import { AccountQuery } from './account.query';

const S = 'account';
const T = 1_700_000_000_000;
const [ALICE, BOB] = ['user-alice', 'user-bob'];
const url = (name: string) => `https://${name}.example/rss`;

interface Row {
  readonly feedUrl: string;
  readonly isSubscribed?: boolean;
  readonly changed: number;
  readonly deleted?: number;
  readonly mergedInto?: string;
  readonly deletion?: { id: number; status: 'PENDING' | 'SUCCESS' | 'FAILURE' };
}

/** The pages' reads against rows written as the projector writes them. */
describe('AccountQuery', () => {
  let database: Database;
  let query: AccountQuery;
  const ids: Record<string, string> = {};

  const store = async (user: string, rows: readonly Row[]): Promise<void> => {
    for (const row of rows) {
      const id = randomUUID();
      ids[row.feedUrl] = id;
      await database.dataSource.query(
        `INSERT INTO ${S}.subscriptions (user_id, id, feed_url, is_subscribed, subscription_changed, guid_changed,
                                         deleted, merged_into, deletion_id, latest_guid, created, created_feed_url, sync_id,
                                         subscribed_at, state_time, identity_time, last_updated, sync_cursor)
         VALUES ($1, $2, $3, $4, $5, NULL, $6, $7, $8, $2, $5, $3, gen_random_uuid(), 0, 0, 0, 0, 0)`,
        [
          user,
          id,
          row.feedUrl,
          row.isSubscribed ?? true,
          row.changed,
          row.deleted ?? null,
          row.mergedInto ?? null,
          row.deletion?.id ?? null,
        ],
      );
      if (row.deletion)
        await database.dataSource.query(
          `INSERT INTO ${S}.deletions (deletion_id, user_id, subscription_id, status, requested_at) VALUES ($1, $2, $3, $4, $5)`,
          [row.deletion.id, user, id, row.deletion.status, row.changed],
        );
    }
  };

  beforeAll(async () => {
    database = await openReadModelTestDatabase('account_query', [S]);
    query = new AccountQuery(database.dataSource, { schema: S });
    await store(ALICE, [
      { feedUrl: url('oldest'), changed: T },
      { feedUrl: url('off'), isSubscribed: false, changed: T + 30 },
      { feedUrl: url('newest'), changed: T + 50 },
      { feedUrl: url('deleting'), changed: T + 40, deletion: { id: 1, status: 'PENDING' } },
      { feedUrl: url('failed'), changed: T + 20, deletion: { id: 2, status: 'FAILURE' } },
      { feedUrl: url('deleted'), changed: T + 60, deleted: T + 60, deletion: { id: 3, status: 'SUCCESS' } },
    ]);
    await store(ALICE, [{ feedUrl: url('merged'), changed: T + 70, mergedInto: ids[url('oldest')]! }]);
    await store(BOB, [{ feedUrl: url('bob'), changed: T + 10 }]);
  });
  afterAll(() => database?.close());

  it('lists the subscriptions newest change first, without deleted or merged ones, with a deletion under way', async () => {
    const listing = await query.subscriptions(ALICE, null, { offset: 0, limit: 10 });
    expect(listing.total).toBe(5);
    expect(listing.items.map((item) => [item.feedUrl, item.isSubscribed, item.deletion])).toEqual([
      [url('newest'), true, null],
      [url('deleting'), true, 'PENDING'],
      [url('off'), false, null],
      [url('failed'), true, 'FAILURE'],
      [url('oldest'), true, null],
    ]);
    expect(listing.items[0]).toEqual({
      guid: ids[url('newest')],
      feedUrl: url('newest'),
      isSubscribed: true,
      changed: T + 50,
      deletion: null,
    });
  });

  it('pages, counting all of them also past the end', async () => {
    const second = await query.subscriptions(ALICE, null, { offset: 2, limit: 2 });
    expect(second).toEqual({
      total: 5,
      items: [
        expect.objectContaining({ feedUrl: url('off') }),
        expect.objectContaining({ feedUrl: url('failed') }),
      ],
    });
    expect(await query.subscriptions(ALICE, null, { offset: 10, limit: 2 })).toEqual({ total: 5, items: [] });
  });

  it('filters by a part of the URL in any case, or by the URLs a title matched', async () => {
    const byUrl = await query.subscriptions(ALICE, { text: 'NEW', urls: [] }, { offset: 0, limit: 10 });
    expect(byUrl.items.map((item) => item.feedUrl)).toEqual([url('newest')]);
    const byTitle = await query.subscriptions(
      ALICE,
      { text: 'Morning Show', urls: [url('off')] },
      { offset: 0, limit: 10 },
    );
    expect(byTitle.items.map((item) => item.feedUrl)).toEqual([url('off')]);
    expect(
      (await query.subscriptions(BOB, { text: 'newest', urls: [] }, { offset: 0, limit: 10 })).total,
    ).toBe(0);
  });

  it('counts each user subscribed feeds, not unsubscribed, deleted or merged ones', async () => {
    const counts = await query.subscribedCounts();
    expect(counts.get(ALICE)).toBe(4);
    expect(counts.get(BOB)).toBe(1);
  });

  it('answers the latest episode actions first, and the latest changes first', async () => {
    for (const [sequence, receivedAt, episode] of [
      [1, T, 'e1'],
      [2, T + 5, 'e2'],
    ] as const)
      await database.dataSource.query(
        `INSERT INTO ${S}.episode_actions (user_id, sequence, ordinal, received_at, podcast, episode, action, "timestamp", device, position, total)
         VALUES ($1, $2, 0, $3, $4, $5, 'play', '2026-12-01T10:00:00', 'phone', 60, 600)`,
        [ALICE, sequence, receivedAt, url('newest'), episode],
      );
    const actions = await query.episodeActions(ALICE, { offset: 0, limit: 1 });
    expect(actions.total).toBe(2);
    expect(actions.items).toEqual([
      expect.objectContaining({
        episode: 'e2',
        action: 'play',
        device: 'phone',
        position: 60,
        total: 600,
        receivedAt: T + 5,
      }),
    ]);
    await database.dataSource.query(
      `INSERT INTO ${S}.request_outcomes (partition, "offset", user_id, event_id, request_id, event_type, instant, outcome)
       VALUES (0, 1, $1, gen_random_uuid(), 'r1', 'SubscriptionsAddRequested', 100, '{"kind":"Added","success":[],"failure":[]}'),
              (0, 2, $1, gen_random_uuid(), 'r2', 'DeletionRequested', 200, '{"kind":"DeletionAccepted","deletionId":1}'),
              (0, 3, $2, gen_random_uuid(), 'r3', 'DeletionRequested', 300, '{"kind":"NotFound"}')`,
      [ALICE, BOB],
    );
    expect(await query.latestChanges(ALICE, 10)).toEqual([
      {
        type: 'DeletionRequested',
        instant: 200,
        requestId: 'r2',
        outcome: { kind: 'DeletionAccepted', deletionId: 1 },
      },
      {
        type: 'SubscriptionsAddRequested',
        instant: 100,
        requestId: 'r1',
        outcome: { kind: 'Added', success: [], failure: [] },
      },
    ]);
  });
});
