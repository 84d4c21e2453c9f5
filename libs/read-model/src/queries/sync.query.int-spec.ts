import { Database } from '../database';
import { openReadModelTestDatabase } from '../testing/read-model-database';
import { SyncQuery } from './sync.query';

const S = 'rm';
const U = 'user-1';
const OTHER = 'user-2';
const [C1, C2] = ['c1000000-0000-4000-8000-000000000000', 'c2000000-0000-4000-8000-000000000000'];
/** sync_ids whose order (5a < 5b < 5c < 5d) is not the order of the entities' changes. */
const [S1, S2, S3, S4, S5] = [
  '5d000000-0000-4000-8000-000000000000',
  '5a000000-0000-4000-8000-000000000000',
  '5c000000-0000-4000-8000-000000000000',
  '5b000000-0000-4000-8000-000000000000',
  '5e000000-0000-4000-8000-000000000000',
];

/** One row of `subscriptions` as the projector writes it: the entity `n` with its sync fields. */
const row = (
  userId: string,
  n: number,
  syncId: string,
  cursor: number,
  clientId: string | null,
  unsubscribedAt: number | null = null,
) => [
  userId,
  `0000000${n}-0000-4000-8000-000000000000`,
  `https://${n}.example/rss`,
  syncId,
  cursor,
  clientId,
  unsubscribedAt,
];

describe('SyncQuery', () => {
  let database: Database;
  const query = () => new SyncQuery(database.dataSource, { schema: S });

  beforeAll(async () => {
    database = await openReadModelTestDatabase('sync_query', [S]);
    // Changes in cursor order: 1 (client C1), 2 (another face, unsubscribed), 3 (C2), 4 (C1); the
    // other user's 5 between them.
    const rows = [
      row(U, 1, S1, 10, C1),
      row(U, 2, S2, 20, null, 15_000),
      row(U, 3, S3, 30, C2),
      row(U, 4, S4, 40, C1),
      row(OTHER, 5, S5, 25, C1),
    ];
    for (const [userId, id, feedUrl, syncId, cursor, clientId, unsubscribedAt] of rows)
      await database.dataSource.query(
        `INSERT INTO ${S}.subscriptions
           (user_id, id, feed_url, is_subscribed, subscription_changed, latest_guid, created, created_feed_url,
            sync_id, subscribed_at, unsubscribed_at, state_time, identity_time, last_updated, last_client_id, sync_cursor)
         VALUES ($1, $2, $3, $7::bigint IS NULL, 1, $2, 1, $3, $4, 1000, $7, 1000, 1000, $5 * 100, $6, $5)`,
        [userId, id, feedUrl, syncId, cursor, clientId, unsubscribedAt],
      );
  });
  afterAll(() => database?.close());

  const cursors = (page: { changes: readonly { cursor: number }[] }) => page.changes.map((c) => c.cursor);

  describe('changes', () => {
    it('answers the user’s changes after since, oldest first, at most limit, and whether more follow', async () => {
      const first = await query().changes(U, { since: null, limit: 2, excludeClientId: null });
      expect(first).toEqual({
        changes: [
          {
            entity: {
              syncId: S1,
              guid: expect.any(String),
              feedUrl: 'https://1.example/rss',
              subscribedAt: 1000,
              unsubscribedAt: null,
            },
            lastUpdated: 1000,
            cursor: 10,
          },
          expect.objectContaining({
            cursor: 20,
            entity: expect.objectContaining({ syncId: S2, unsubscribedAt: 15_000 }),
          }),
        ],
        hasMore: true,
      });
      const rest = await query().changes(U, { since: 20, limit: 2, excludeClientId: null });
      expect(cursors(rest)).toEqual([30, 40]);
      expect(rest.hasMore).toBe(false);
    });

    it('answers where the page before begins: the cursor before the limit changes at or before since', async () => {
      expect((await query().changes(U, { since: 30, limit: 1, excludeClientId: null })).previousSince).toBe(
        20,
      );
      expect((await query().changes(U, { since: 30, limit: 2, excludeClientId: null })).previousSince).toBe(
        10,
      );
      // Fewer than limit + 1 before: the page before starts at the beginning.
      expect(
        (await query().changes(U, { since: 20, limit: 2, excludeClientId: null })).previousSince,
      ).toBeNull();
      const past = await query().changes(U, { since: 40, limit: 2, excludeClientId: null });
      expect(past).toEqual({ changes: [], hasMore: false, previousSince: 20 });
    });

    it('leaves out the changes of the Client-ID to exclude, from the page and from the page before', async () => {
      const page = await query().changes(U, { since: null, limit: 10, excludeClientId: C1 });
      expect(cursors(page)).toEqual([20, 30]);
      expect((await query().changes(U, { since: 40, limit: 1, excludeClientId: C1 })).previousSince).toBe(20);
      expect(cursors(await query().changes(U, { since: null, limit: 10, excludeClientId: C2 }))).toEqual([
        10, 20, 40,
      ]);
    });

    it('sees no other user’s entities', async () => {
      expect(
        cursors(await query().changes(OTHER, { since: null, limit: 10, excludeClientId: null })),
      ).toEqual([25]);
      expect(
        cursors(await query().changes('nobody', { since: null, limit: 10, excludeClientId: null })),
      ).toEqual([]);
    });
  });

  describe('entities', () => {
    const syncIds = (page: { entities: readonly { syncId: string }[] }) => page.entities.map((e) => e.syncId);

    it('pages through the subscribed entities in sync_id order, after a cursor', async () => {
      const first = await query().entities(U, { after: null, limit: 2, includeUnsubscribed: false });
      expect(syncIds(first)).toEqual([S4, S3]);
      expect(first.hasMore).toBe(true);
      const rest = await query().entities(U, { after: S3, limit: 2, includeUnsubscribed: false });
      expect(syncIds(rest)).toEqual([S1]);
      expect(rest.hasMore).toBe(false);
    });

    it('lists the unsubscribed ones too when asked', async () => {
      const all = await query().entities(U, { after: null, limit: 10, includeUnsubscribed: true });
      expect(syncIds(all)).toEqual([S2, S4, S3, S1]);
    });
  });

  describe('entity', () => {
    it('answers the user’s entity by sync_id, subscribed or not, and null for another user’s', async () => {
      expect(await query().entity(U, S2)).toEqual({
        syncId: S2,
        guid: '00000002-0000-4000-8000-000000000000',
        feedUrl: 'https://2.example/rss',
        subscribedAt: 1000,
        unsubscribedAt: 15_000,
      });
      expect(await query().entity(U, S5)).toBeNull();
      expect(await query().entity(OTHER, S5)).not.toBeNull();
    });
  });
});
