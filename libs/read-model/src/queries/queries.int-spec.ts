import { Database } from '../database';
import { deficit, storedOffset, storedOffsets } from '../projection-offsets';
import { inTransaction } from '../sql';
import { openReadModelTestDatabase, storeOffsets } from '../testing/read-model-database';
import { DeletionSagaQuery } from './deletion-saga.query';
import { DeletionsQuery } from './deletions.query';
import { HistoryQuery } from './history.query';
import { OutcomesQuery, positionKey } from './outcomes.query';
import { hasProjection, projectionCounts } from './projection.query';
import { SubscriptionsQuery } from './subscriptions.query';

const S = 'rm';
const U = 'user-1';
const OTHER = 'user-2';
const [A1, A2, B1, C1] = [
  'a1000000-0000-4000-8000-000000000000',
  'a2000000-0000-4000-8000-000000000000',
  'b1000000-0000-4000-8000-000000000000',
  'c1000000-0000-4000-8000-000000000000',
];
/** The sync_ids of A, B and C, and two sync actions seen: one that acted on C, one on nothing. */
const [SA, SB, SC, X1, X2] = [
  '5a000000-0000-4000-8000-000000000000',
  '5b000000-0000-4000-8000-000000000000',
  '5c000000-0000-4000-8000-000000000000',
  'f1000000-0000-4000-8000-000000000000',
  'f2000000-0000-4000-8000-000000000000',
];

/** The read model's queries against rows written as the projector writes them: subscription A
 * (guids A1 then A2), B merged into A, C deleted by deletion 7. */
describe('read-model queries', () => {
  let database: Database;
  const readModel = { schema: S };

  beforeAll(async () => {
    database = await openReadModelTestDatabase('read_model_queries', [S, 'rm_empty']);
    const sql = database.dataSource;
    // Each subscription's first guid and the feed_url it was created with are on its row; A's
    // second guid is in the table behind the view subscription_guids.
    await sql.query(
      `INSERT INTO ${S}.subscriptions
         (user_id, id, feed_url, is_subscribed, subscription_changed, guid_changed, deleted, merged_into, deletion_id,
          latest_guid, created, created_feed_url, sync_id, subscribed_at, unsubscribed_at, state_time, identity_time,
          last_updated, sync_cursor)
       VALUES ($1, $2, 'https://a.example/rss', true, 100, 200, NULL, NULL, NULL, $3, 100, 'https://a.example/rss',
               $6, 100000, NULL, 100000, 200000, 200000, 200000),
              ($1, $4, 'https://b.example/rss', true, 150, NULL, NULL, $2, NULL, $4, 150, 'https://b.example/rss',
               $7, 150000, 150000, 150000, 150000, 150000, 150000),
              ($1, $5, 'https://c.example/rss', false, 300, NULL, 300, NULL, 7, $5, 120, 'https://c.example/rss',
               $8, 120000, 300000, 300000, 120000, 300000, 300000)`,
      [U, A1, A2, B1, C1, SA, SB, SC],
    );
    await sql.query(
      `INSERT INTO ${S}.sync_actions (user_id, action_id, status, reason, fingerprint, subscription_id)
       VALUES ($1, $2, 'applied', NULL, 'f', $3), ($1, $4, 'rejected', 'Entity not found', 'f', NULL)`,
      [U, X1, C1, X2],
    );
    await sql.query(
      `INSERT INTO ${S}.subscription_later_guids (user_id, guid, subscription_id, since, position)
       VALUES ($1, $3, $2, 200, 1)`,
      [U, A1, A2],
    );
    await sql.query(
      `INSERT INTO ${S}.deletions (deletion_id, user_id, subscription_id, status, requested_at, finished_at)
       VALUES (7, $1, $2, 'SUCCESS', 250, 300), (8, $3, $2, 'PENDING', 260, NULL)`,
      [U, C1, OTHER],
    );
    await sql.query(
      `INSERT INTO ${S}.request_outcomes (partition, "offset", user_id, event_id, request_id, event_type, instant, outcome)
       VALUES (1, 4, $1, gen_random_uuid(), 'r4', 'DeletionRequested', 250, '{"kind":"DeletionAccepted","deletionId":7}'),
              (1, 2, $1, gen_random_uuid(), 'r2', 'SubscriptionsAddRequested', 100, '{"kind":"Added","success":[],"failure":[]}'),
              (0, 1, $2, gen_random_uuid(), 'r1', 'SubscriptionsAddRequested', 90, '{"kind":"NotFound"}')`,
      [U, OTHER],
    );
    await storeOffsets(sql, S, { 0: 2, 1: 5 }, { notify: false });
  });
  afterAll(() => database?.close());

  describe('SubscriptionsQuery', () => {
    const query = () => new SubscriptionsQuery(database.dataSource, readModel);

    it('lists by change time, each with its latest guid after merges', async () => {
      const page = await query().list(U, null, { page: 1, perPage: 10 });
      expect(page.total).toBe(3);
      expect(page.items).toEqual([
        expect.objectContaining({ guid: B1, newGuid: A2, feedUrl: 'https://b.example/rss', deleted: null }),
        expect.objectContaining({ guid: A1, newGuid: A2, subscriptionChanged: 100, guidChanged: 200 }),
        expect.objectContaining({ guid: C1, newGuid: null, isSubscribed: false, deleted: 300 }),
      ]);
    });

    it('lists what changed after `since`, with the guid each had at `since`', async () => {
      const page = await query().list(U, 150, { page: 1, perPage: 10 });
      expect(page.items.map((item) => [item.guid, item.newGuid])).toEqual([
        [A1, A2],
        [C1, null],
      ]);
      expect(page.total).toBe(2);
    });

    it('pages, and counts the total on a page past the end', async () => {
      expect((await query().list(U, null, { page: 2, perPage: 2 })).items.map((item) => item.guid)).toEqual([
        C1,
      ]);
      expect(await query().list(U, null, { page: 3, perPage: 2 })).toEqual({ total: 3, items: [] });
      expect(await query().list(OTHER, null, { page: 1, perPage: 10 })).toEqual({ total: 0, items: [] });
    });

    it('pages after a cursor: a change between two pages shifts nothing past it', async () => {
      const first = await query().list(U, null, { page: 1, perPage: 2 });
      expect(first.items.map((item) => item.guid)).toEqual([B1, A1]);
      expect(first.next).toEqual({ changeTime: 200, guid: A1 });
      const sql = database.dataSource;
      // B changes after the first page was read: it moves to the end of the order.
      await sql.query(`UPDATE ${S}.subscriptions SET subscription_changed = 400 WHERE id = $1`, [B1]);
      try {
        const byCursor = await query().list(U, null, { page: 2, perPage: 2, after: first.next! });
        expect(byCursor.items.map((item) => item.guid)).toEqual([C1, B1]);
        expect(byCursor.total).toBe(3);
        expect(byCursor.next).toBeUndefined();
        // By number, the same page now starts one later and C is on neither page.
        const byNumber = await query().list(U, null, { page: 2, perPage: 2 });
        expect(byNumber.items.map((item) => item.guid)).toEqual([B1]);
        const past = await query().list(U, null, {
          page: 3,
          perPage: 2,
          after: { changeTime: 400, guid: B1 },
        });
        expect(past).toEqual({ total: 3, items: [] });
      } finally {
        await sql.query(`UPDATE ${S}.subscriptions SET subscription_changed = 150 WHERE id = $1`, [B1]);
      }
    });

    it('gets a subscription by any of its guids, following merges', async () => {
      expect(await query().get(U, A2)).toEqual(expect.objectContaining({ guid: A2, newGuid: null }));
      expect(await query().get(U, A1)).toEqual(expect.objectContaining({ guid: A1, newGuid: A2 }));
      expect(await query().get(U, B1)).toEqual(
        expect.objectContaining({ guid: B1, newGuid: A2, feedUrl: 'https://a.example/rss' }),
      );
      expect(await query().get(OTHER, A1)).toBeNull();
    });

    it('follows a chain of merges to its end, however long, and dates it by its latest guid change', async () => {
      // Subscription i is merged into i + 1 (at instant 1000 + i); the last one is merged nowhere.
      const user = 'user-chain';
      const hops = 150;
      const id = (i: number) => `md5('chain-${i}')::uuid`;
      await database.dataSource.query(
        `INSERT INTO ${S}.subscriptions
           (user_id, id, feed_url, is_subscribed, subscription_changed, guid_changed, deleted, merged_into, deletion_id,
            latest_guid, created, created_feed_url, sync_id, subscribed_at, state_time, identity_time,
            last_updated, sync_cursor)
         SELECT $1, md5('chain-' || i)::uuid, 'https://hop' || i || '.example/', true, 100 + i,
                CASE WHEN i < $2 THEN 1000 + i END, NULL,
                CASE WHEN i < $2 THEN md5('chain-' || (i + 1))::uuid END, NULL,
                md5('chain-' || i)::uuid, 100 + i, 'https://hop' || i || '.example/', gen_random_uuid(), 0, 0, 0, 0, i
           FROM generate_series(0, $2) AS i`,
        [user, hops],
      );
      const [{ first, last }] = await database.dataSource.query(
        `SELECT ${id(0)}::text AS first, ${id(hops)}::text AS last`,
      );
      expect(await query().get(user, first)).toEqual({
        feedUrl: `https://hop${hops}.example/`,
        guid: first,
        isSubscribed: true,
        subscriptionChanged: 100 + hops,
        guidChanged: 1000 + hops - 1,
        newGuid: last,
        deleted: null,
      });
      const listed = await query().list(user, null, { page: 1, perPage: hops + 1 });
      expect(listed.items.find((item) => item.guid === first)).toEqual(
        expect.objectContaining({ newGuid: last, guidChanged: 1000 }),
      );
      const family = await new HistoryQuery(database.dataSource, readModel).family(user, first);
      expect(family?.guids).toHaveLength(hops + 1);
      await database.dataSource.query(`DELETE FROM ${S}.subscriptions WHERE user_id = $1`, [user]);
    });
  });

  describe('DeletionsQuery', () => {
    it("answers a deletion's status to its user only, and counts deletions by status", async () => {
      const query = new DeletionsQuery(database.dataSource, readModel);
      expect(await query.status(U, 7)).toBe('SUCCESS');
      expect(await query.status(OTHER, 7)).toBeNull();
      expect(await query.countByStatus()).toEqual(
        new Map([
          ['SUCCESS', 1],
          ['PENDING', 1],
        ]),
      );
    });
  });

  describe('OutcomesQuery', () => {
    it('reads the outcomes of any positions in one query; positions not applied are absent', async () => {
      const query = new OutcomesQuery(database.dataSource, readModel);
      const found = await query.atPositions([
        { partition: 1, offset: 4 },
        { partition: 0, offset: 1 },
        { partition: 0, offset: 2 },
      ]);
      expect(found).toEqual(
        new Map([
          [positionKey({ partition: 1, offset: 4 }), { kind: 'DeletionAccepted', deletionId: 7 }],
          [positionKey({ partition: 0, offset: 1 }), { kind: 'NotFound' }],
        ]),
      );
      expect(await query.at({ partition: 0, offset: 2 })).toBeNull();
    });
  });

  describe('HistoryQuery', () => {
    const query = () => new HistoryQuery(database.dataSource, readModel);

    it("reads a user's outcomes and the position of its first applied request", async () => {
      expect((await query().outcomes(U)).map((row) => [row.partition, row.offset]).sort()).toEqual([
        [1, '2'],
        [1, '4'],
      ]);
      expect(await query().firstApplied(U)).toEqual({ partition: 1, offset: '2' });
      expect(await query().firstApplied('nobody')).toBeUndefined();
    });

    it('gathers the family of a subscription: the one a guid resolves to and those merged into it', async () => {
      const family = await query().family(U, B1);
      expect(family?.guids?.sort()).toEqual([A1, A2, B1].sort());
      expect(family?.feed_urls?.sort()).toEqual(['https://a.example/rss', 'https://b.example/rss']);
      expect(family?.current_feed_urls?.length).toBe(2);
      expect(family?.deletion_ids).toBeNull();
      expect(family?.sync_ids?.sort()).toEqual([SA, SB]);
      expect(family?.action_ids).toBeNull();
      expect(await query().family(U, C1)).toEqual({
        guids: [C1],
        feed_urls: ['https://c.example/rss'],
        current_feed_urls: ['https://c.example/rss'],
        deletion_ids: ['7'],
        sync_ids: [SC],
        action_ids: [X1],
      });
      expect(await query().family(U, 'd1000000-0000-4000-8000-000000000000')).toEqual({
        guids: null,
        feed_urls: null,
        current_feed_urls: null,
        deletion_ids: null,
        sync_ids: null,
        action_ids: null,
      });
    });
  });

  describe('DeletionSagaQuery', () => {
    it('records one result per deletion, its logging, and finds what a crash left behind', async () => {
      const saga = new DeletionSagaQuery(S);
      const sql = database.dataSource;
      expect(await saga.pendingWithoutResult(sql)).toEqual([{ user_id: OTHER, deletion_id: '8' }]);
      const clock = await inTransaction(sql, (tx) => saga.lockClock(tx, OTHER));
      expect(clock).toEqual({ lastInstant: 0, syncClock: 0 });
      const row = await saga.recordCompleted(sql, 8, OTHER, 400);
      expect(row).toEqual({
        deletion_id: '8',
        user_id: OTHER,
        result: 'COMPLETED',
        deleted_at: '400',
        reason: null,
        logged: false,
      });
      await saga.recordFailed(sql, 8, OTHER, 'too late');
      expect(await saga.result(sql, 8)).toEqual(row);
      expect(await saga.pendingWithoutResult(sql)).toEqual([]);
      expect(await saga.unlogged(sql)).toEqual([row]);
      expect(await saga.countUnlogged(sql)).toBe(1);
      await saga.markLogged(sql, 8);
      expect(await saga.unlogged(sql)).toEqual([]);
      expect(await saga.countUnlogged(sql)).toBe(0);
      expect(await saga.result(sql, 9)).toBeUndefined();
    });
  });

  describe('projection offsets and counts', () => {
    it('reads the stored offsets and what another set of offsets lacks', async () => {
      expect(await storedOffsets(database.dataSource, S)).toEqual(
        new Map([
          [0, 2],
          [1, 5],
        ]),
      );
      expect(await storedOffset(database.dataSource, S, 1)).toBe(5);
      expect(await storedOffset(database.dataSource, S, 2)).toBe(0);
      expect(
        deficit(
          new Map([
            [0, 4],
            [1, 5],
            [2, 1],
          ]),
          new Map([
            [0, 2],
            [1, 7],
          ]),
        ),
      ).toBe(3);
    });

    it('counts events applied and subscriptions, and tells a projection schema from another', async () => {
      expect(await projectionCounts(database.dataSource, S)).toEqual({ events: 7, subscriptions: 3 });
      expect(await projectionCounts(database.dataSource, 'rm_empty')).toEqual({
        events: 0,
        subscriptions: 0,
      });
      expect(await hasProjection(database.dataSource, S)).toBe(true);
      expect(await hasProjection(database.dataSource, 'public')).toBe(false);
    });
  });
});

describe('inTransaction', () => {
  let database: Database;
  beforeAll(async () => (database = await openReadModelTestDatabase('in_transaction', [S])));
  afterAll(() => database?.close());

  const clocks = async () =>
    (await database.dataSource.query(`SELECT user_id FROM ${S}.user_clocks ORDER BY user_id`)).map(
      (row: { user_id: string }) => row.user_id,
    );

  it('commits what the work did and answers its result', async () => {
    const answer = await inTransaction(database.dataSource, async (sql) => {
      await sql.query(`INSERT INTO ${S}.user_clocks VALUES ('committed', 1)`);
      return (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${S}.user_clocks`))[0]?.n;
    });
    expect(answer).toBe(1);
    expect(await clocks()).toEqual(['committed']);
  });

  it('rolls everything back when the work fails, and rethrows', async () => {
    await expect(
      inTransaction(database.dataSource, async (sql) => {
        await sql.query(`INSERT INTO ${S}.user_clocks VALUES ('rolled back', 1)`);
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    expect(await clocks()).toEqual(['committed']);
  });

  it('runs at the isolation level asked for', async () => {
    const level = (options?: { isolation: 'REPEATABLE READ' }) =>
      inTransaction(
        database.dataSource,
        async (sql) =>
          (await sql.query<{ level: string }>("SELECT current_setting('transaction_isolation') AS level"))[0]
            ?.level,
        options,
      );
    expect(await level()).toBe('read committed');
    expect(await level({ isolation: 'REPEATABLE READ' })).toBe('repeatable read');
  });
});
