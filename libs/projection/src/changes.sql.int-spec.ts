import {
  Change,
  Deletion,
  Device,
  EpisodeAction,
  SeenAction,
  SettingsScope,
  settingsScopeIdOf,
  Subscription,
  syncIdOf,
} from '@castlog/domain';
import { Database, poolOf, Sql } from '@castlog/read-model';
import { openDatabaseAt } from '@castlog/runtime';
import { createTestDatabase } from '../../../test/support/databases';
import { changeWrites, writeChanges } from './changes.sql';

const SCHEMA = 'castlog';
const U = 'user-changes';
const G1 = '11111111-1111-4111-8111-111111111111';
const G2 = '22222222-2222-4222-8222-222222222222';
const G3 = '33333333-3333-4333-8333-333333333333';
const T1 = 1_700_000_000_000;
const T2 = T1 + 1000;

const subscription = (id: string, fields: Partial<Subscription> = {}): Subscription => ({
  userId: U,
  id,
  guids: [{ guid: id, since: T1 }],
  feedUrl: `https://feeds.example/${id}`,
  isSubscribed: true,
  subscriptionChanged: T1,
  guidChanged: null,
  deleted: null,
  mergedInto: null,
  deletionId: null,
  syncId: syncIdOf(U, id),
  subscribedAt: T1 * 1000,
  unsubscribedAt: null,
  stateTime: T1 * 1000,
  identityTime: T1 * 1000,
  lastUpdated: T1 * 1000,
  lastClientId: null,
  syncCursor: T1 * 1000,
  ...fields,
  // The guid it answers to: the chain's latest unless the spec names another.
  guid: fields.guid ?? fields.guids?.at(-1)?.guid ?? id,
});

const deletion = (deletionId: number, fields: Partial<Deletion> = {}): Deletion => ({
  userId: U,
  deletionId,
  subscriptionId: G1,
  status: 'PENDING',
  requestedAt: T1,
  finishedAt: null,
  ...fields,
});

const saved = (s: Subscription): Change => ({ kind: 'SubscriptionSaved', subscription: s });
const guid = (g: string, subscriptionId: string, since: number, position: number, userId = U): Change => ({
  kind: 'GuidRecorded',
  userId,
  guid: g,
  subscriptionId,
  since,
  position,
});
const feedUrl = (url: string, subscriptionId: string, atCreation = false, userId = U): Change => ({
  kind: 'FeedUrlRecorded',
  userId,
  normalizedFeedUrl: url,
  subscriptionId,
  atCreation,
});
const clock = (lastInstant: number, userId = U, syncClock?: number): Change => ({
  kind: 'ClockAdvanced',
  userId,
  lastInstant,
  ...(syncClock !== undefined ? { syncClock } : {}),
});
const CLIENT = '0c1e4b7a-5d2f-4e8a-9b3c-7f6a5e4d3c2b';
const A1 = 'a1a1a1a1-0000-4000-8000-000000000000';
const A2 = 'a2a2a2a2-0000-4000-8000-000000000000';
const seen = (actionId: string, fields: Partial<SeenAction> = {}): Change => ({
  kind: 'ActionSeen',
  action: {
    userId: U,
    actionId,
    status: 'applied',
    reason: null,
    fingerprint: 'f'.repeat(64),
    subscriptionId: G1,
    ...fields,
  },
});
const deviceSaved = (id: string, fields: Partial<Device> = {}): Change => ({
  kind: 'DeviceSaved',
  device: { userId: U, id, caption: '', type: 'other', lastUsed: T1, ...fields },
});
const actionsRecorded = (
  sequence: number,
  actions: readonly (EpisodeAction & { readonly timestamp: string })[],
  userId = U,
  receivedAt = T1,
): Change => ({ kind: 'EpisodeActionsRecorded', userId, sequence, receivedAt, actions });
const play = (episode: string, fields: Partial<EpisodeAction> = {}) => ({
  podcast: 'https://a.example/rss',
  episode,
  action: 'play' as const,
  timestamp: '2023-11-14T22:13:20',
  ...fields,
});

describe('changeWrites: a batch of changes as one statement per change kind', () => {
  let database: Database;
  let sql: Sql;
  beforeAll(async () => {
    database = await openDatabaseAt(await createTestDatabase('change_writes'), SCHEMA, 2);
    const pool = poolOf(database.dataSource);
    sql = { query: async (text, params) => (await pool.query(text, params)).rows };
  });
  afterAll(() => database?.close());

  /** Every table a change kind writes, for `user`, ordered so rows compare as arrays. */
  const rows = async (user: string) => ({
    subscriptions: await sql.query(
      `SELECT id, feed_url, is_subscribed, subscription_changed::float8 AS subscription_changed,
              guid_changed::float8 AS guid_changed, deleted::float8 AS deleted, merged_into,
              deletion_id::float8 AS deletion_id, latest_guid
         FROM castlog.subscriptions WHERE user_id = $1 ORDER BY id`,
      [user],
    ),
    guids: await sql.query(
      `SELECT guid, subscription_id, since::float8 AS since, position FROM castlog.subscription_guids
        WHERE user_id = $1 ORDER BY subscription_id, position`,
      [user],
    ),
    feedUrls: await sql.query(
      `SELECT normalized_feed_url, subscription_id FROM castlog.subscription_feed_urls
        WHERE user_id = $1 ORDER BY normalized_feed_url`,
      [user],
    ),
    deletions: await sql.query(
      `SELECT deletion_id::float8 AS deletion_id, subscription_id, status, requested_at::float8 AS requested_at,
              finished_at::float8 AS finished_at
         FROM castlog.deletions WHERE user_id = $1 ORDER BY deletion_id`,
      [user],
    ),
    clock: (
      await sql.query<{ last_instant: number }>(
        `SELECT last_instant::float8 AS last_instant FROM castlog.user_clocks WHERE user_id = $1`,
        [user],
      )
    ).map((row) => row.last_instant),
    syncClock: (
      await sql.query<{ sync_clock: number }>(
        `SELECT sync_clock::float8 AS sync_clock FROM castlog.user_clocks WHERE user_id = $1`,
        [user],
      )
    ).map((row) => row.sync_clock),
  });

  it('writes nothing for no changes', () => expect(changeWrites(SCHEMA, [])).toEqual([]));

  it('maps each change kind to one statement of its own (subscriptions to two: created, and the others), whatever the number of changes', () => {
    const changes: Change[] = [
      saved(subscription(G1)),
      guid(G1, G1, T1, 0),
      feedUrl('https://a.example/rss', G1, true),
      saved(subscription(G2)),
      guid(G2, G2, T1, 0),
      guid(G3, G2, T2, 1),
      feedUrl('https://b.example/rss', G2, true),
      feedUrl('https://c.example/rss', G2),
      feedUrl('https://d.example/rss', G1),
      { kind: 'DeletionSaved', deletion: deletion(5) },
      clock(T1),
    ];
    expect(changeWrites(SCHEMA, changes).map((write) => write.name)).toEqual([
      'subscriptions_created',
      'guids_written',
      'feed_urls_written',
      'deletions_written',
      'clocks_written',
    ]);
    expect(changeWrites(SCHEMA, [guid(G2, G1, T2, 1)]).map((write) => write.name)).toEqual(['guids_written']);
    // Subscriptions created in the batch (created with a feed_url) are inserted, the others upserted.
    expect(
      changeWrites(SCHEMA, [
        saved(subscription(G1)),
        feedUrl('https://a.example/rss', G1, true),
        saved(subscription(G2)),
      ]).map((write) => write.name),
    ).toEqual(['subscriptions_created', 'subscriptions_written']);
    expect(changeWrites(SCHEMA, [saved(subscription(G2))]).map((write) => write.name)).toEqual([
      'subscriptions_written',
    ]);
    // A subscription's first guid and the feed_url it is created with are on its own row.
    expect(changeWrites(SCHEMA, [guid(G1, G1, T1, 0), feedUrl('https://a.example/rss', G1, true)])).toEqual(
      [],
    );
  });

  it("maps the gpodder.net face's changes to a statement each: devices, and every upload's episode actions", () => {
    const changes: Change[] = [
      deviceSaved('phone'),
      deviceSaved('tv'),
      actionsRecorded(1, [play('e1'), play('e2')]),
      actionsRecorded(2, [play('e3')]),
      clock(T1),
    ];
    expect(changeWrites(SCHEMA, changes).map((write) => write.name)).toEqual([
      'clocks_written',
      'devices_written',
      'episode_actions_written',
    ]);
    expect(changeWrites(SCHEMA, [actionsRecorded(3, [])])).toEqual([]);
  });

  it('writes every kind to its table in one round trip', async () => {
    const user = 'user-every-kind';
    const mine = (s: Subscription): Subscription => ({ ...s, userId: user });
    const chain = mine(
      subscription(G1, {
        guids: [
          { guid: G1, since: T1 },
          { guid: G2, since: T2 },
        ],
        guidChanged: T2,
        deletionId: 7,
      }),
    );
    await writeChanges(sql, SCHEMA, [
      saved(chain),
      guid(G1, G1, T1, 0, user),
      guid(G2, G1, T2, 1, user),
      feedUrl('https://a.example/rss', G1, true, user),
      { kind: 'DeletionSaved', deletion: { ...deletion(7), userId: user } },
      clock(T2, user),
    ]);
    expect(await rows(user)).toEqual({
      subscriptions: [
        {
          id: G1,
          feed_url: `https://feeds.example/${G1}`,
          is_subscribed: true,
          subscription_changed: T1,
          guid_changed: T2,
          deleted: null,
          merged_into: null,
          deletion_id: 7,
          latest_guid: G2,
        },
      ],
      guids: [
        { guid: G1, subscription_id: G1, since: T1, position: 0 },
        { guid: G2, subscription_id: G1, since: T2, position: 1 },
      ],
      feedUrls: [{ normalized_feed_url: 'https://a.example/rss', subscription_id: G1 }],
      deletions: [
        { deletion_id: 7, subscription_id: G1, status: 'PENDING', requested_at: T1, finished_at: null },
      ],
      clock: [T2],
      syncClock: [0],
    });
  });

  it('refuses to create a subscription whose row is there: the write fails and overwrites nothing', async () => {
    const user = 'user-created-twice';
    const created = (feed: string): Change[] => [
      saved({ ...subscription(G1, { feedUrl: feed }), userId: user }),
      feedUrl(feed, G1, true, user),
      clock(T1, user),
    ];
    await writeChanges(sql, SCHEMA, created('https://a.example/rss'));
    await expect(writeChanges(sql, SCHEMA, created('https://b.example/rss'))).rejects.toThrow(
      /duplicate key value violates unique constraint "subscriptions_pkey"/,
    );
    expect((await rows(user)).subscriptions).toEqual([
      expect.objectContaining({ id: G1, feed_url: 'https://a.example/rss' }),
    ]);
  });

  it('keeps the last change of each key in a batch, and replaces rows stored before', async () => {
    await writeChanges(sql, SCHEMA, [
      saved(subscription(G1)),
      guid(G1, G1, T1, 0),
      saved(subscription(G3)),
      guid(G3, G3, T1, 0),
      feedUrl('https://a.example/rss', G1, true),
      { kind: 'DeletionSaved', deletion: deletion(9) },
      clock(T1),
    ]);
    await writeChanges(sql, SCHEMA, [
      saved(subscription(G1, { isSubscribed: false, subscriptionChanged: T2 })),
      saved(subscription(G1, { feedUrl: 'https://b.example/rss', subscriptionChanged: T2, deletionId: 9 })),
      feedUrl('https://a.example/rss', G3),
      feedUrl('https://b.example/rss', G1),
      feedUrl('https://b.example/rss', G3),
      { kind: 'DeletionSaved', deletion: deletion(9, { status: 'SUCCESS', finishedAt: T2 }) },
      saved(subscription(G3, { mergedInto: G1, guidChanged: T2 })),
      clock(T2),
    ]);
    const after = await rows(U);
    expect(after.subscriptions).toEqual([
      expect.objectContaining({
        id: G1,
        feed_url: 'https://b.example/rss',
        is_subscribed: true,
        subscription_changed: T2,
        deletion_id: 9,
      }),
      expect.objectContaining({ id: G3, merged_into: G1, guid_changed: T2 }),
    ]);
    expect(after.feedUrls).toEqual([
      { normalized_feed_url: 'https://a.example/rss', subscription_id: G3 },
      { normalized_feed_url: 'https://b.example/rss', subscription_id: G3 },
    ]);
    expect(after.deletions).toEqual([
      { deletion_id: 9, subscription_id: G1, status: 'SUCCESS', requested_at: T1, finished_at: T2 },
    ]);
    expect(after.guids).toEqual([
      { guid: G1, subscription_id: G1, since: T1, position: 0 },
      { guid: G3, subscription_id: G3, since: T1, position: 0 },
    ]);
    expect(after.clock).toEqual([T2]);
    expect(after.syncClock).toEqual([0]);
  });

  it("keeps a new subscription's first guid and feed_url on its row, and what it takes later in the tables behind the views", async () => {
    const user = 'user-created';
    const mine = (id: string, fields: Partial<Subscription> = {}) =>
      saved({ ...subscription(id, fields), userId: user });
    const A = 'https://a.example/rss';
    const B = 'https://b.example/rss';
    const stored = async () => ({
      subscriptions: await sql.query(
        `SELECT id, created::float8 AS created, created_feed_url FROM castlog.subscriptions
          WHERE user_id = $1 ORDER BY id`,
        [user],
      ),
      laterGuids: await sql.query(
        `SELECT guid, subscription_id, position FROM castlog.subscription_later_guids WHERE user_id = $1`,
        [user],
      ),
      laterFeedUrls: await sql.query(
        `SELECT normalized_feed_url, subscription_id FROM castlog.subscription_later_feed_urls
          WHERE user_id = $1 ORDER BY normalized_feed_url`,
        [user],
      ),
    });
    await writeChanges(sql, SCHEMA, [
      mine(G1),
      guid(G1, G1, T1, 0, user),
      feedUrl(A, G1, true, user),
      clock(T1, user),
    ]);
    expect(await stored()).toEqual({
      subscriptions: [{ id: G1, created: T1, created_feed_url: A }],
      laterGuids: [],
      laterFeedUrls: [],
    });

    const chain = [
      { guid: G1, since: T1 },
      { guid: G2, since: T2 },
    ];
    await writeChanges(sql, SCHEMA, [
      mine(G1, { guids: chain, guidChanged: T2, feedUrl: B, subscriptionChanged: T2 }),
      guid(G2, G1, T2, 1, user),
      feedUrl(B, G1, false, user),
      mine(G3, { guids: [{ guid: G3, since: T2 }], subscriptionChanged: T2 }),
      guid(G3, G3, T2, 0, user),
      feedUrl(A, G3, false, user),
      clock(T2, user),
    ]);
    expect(await stored()).toEqual({
      subscriptions: [
        { id: G1, created: T1, created_feed_url: A },
        { id: G3, created: T2, created_feed_url: null },
      ],
      laterGuids: [{ guid: G2, subscription_id: G1, position: 1 }],
      laterFeedUrls: [
        { normalized_feed_url: A, subscription_id: G3 },
        { normalized_feed_url: B, subscription_id: G1 },
      ],
    });
    // The views read as the whole chains and the latest holder of each feed_url.
    const { guids, feedUrls } = await rows(user);
    expect(guids).toEqual([
      { guid: G1, subscription_id: G1, since: T1, position: 0 },
      { guid: G2, subscription_id: G1, since: T2, position: 1 },
      { guid: G3, subscription_id: G3, since: T2, position: 0 },
    ]);
    expect(feedUrls).toEqual([
      { normalized_feed_url: A, subscription_id: G3 },
      { normalized_feed_url: B, subscription_id: G1 },
    ]);
  });

  describe('the gpodder.net tables', () => {
    const devices = (user: string) =>
      sql.query(
        `SELECT id, caption, type, last_used::float8 AS last_used FROM castlog.devices WHERE user_id = $1 ORDER BY id`,
        [user],
      );
    const actions = (user: string) =>
      sql.query(
        `SELECT sequence::float8 AS sequence, ordinal, received_at::float8 AS received_at, podcast, episode, action,
                "timestamp", device, guid, started, position, total
           FROM castlog.episode_actions WHERE user_id = $1 ORDER BY sequence, ordinal`,
        [user],
      );

    it('writes devices, the last change of each in a batch, replacing the row stored before', async () => {
      const user = 'user-devices';
      const mine = (id: string, fields: Partial<Device> = {}) => deviceSaved(id, { userId: user, ...fields });
      await writeChanges(sql, SCHEMA, [mine('phone'), mine('tv', { caption: 'TV', type: 'server' })]);
      expect(await devices(user)).toEqual([
        { id: 'phone', caption: '', type: 'other', last_used: T1 },
        { id: 'tv', caption: 'TV', type: 'server', last_used: T1 },
      ]);
      await writeChanges(sql, SCHEMA, [
        mine('phone', { caption: 'Phone' }),
        mine('phone', { caption: 'Old phone', type: 'mobile', lastUsed: T2 }),
        mine('Phone'),
      ]);
      expect(await devices(user)).toEqual([
        { id: 'Phone', caption: '', type: 'other', last_used: T1 },
        { id: 'phone', caption: 'Old phone', type: 'mobile', last_used: T2 },
        { id: 'tv', caption: 'TV', type: 'server', last_used: T1 },
      ]);
      // Another user's device of the same id is another row.
      await writeChanges(sql, SCHEMA, [deviceSaved('phone', { userId: 'user-devices-2', type: 'laptop' })]);
      expect((await devices(user)).find((d) => d.id === 'phone')).toEqual({
        id: 'phone',
        caption: 'Old phone',
        type: 'mobile',
        last_used: T2,
      });
    });

    it('gives a device stored before last uses were (NULL) the last use of its next change', async () => {
      const user = 'user-devices-unknown';
      await sql.query(
        `INSERT INTO castlog.devices (user_id, id, caption, type) VALUES ($1, 'phone', 'Phone', 'mobile')`,
        [user],
      );
      expect(await devices(user)).toEqual([
        { id: 'phone', caption: 'Phone', type: 'mobile', last_used: null },
      ]);
      await writeChanges(sql, SCHEMA, [
        deviceSaved('phone', { userId: user, caption: 'Phone', type: 'mobile', lastUsed: T2 }),
      ]);
      expect(await devices(user)).toEqual([{ id: 'phone', caption: 'Phone', type: 'mobile', last_used: T2 }]);
    });

    it('writes each upload as rows in its order, keyed by its sequence, the fields not given as null', async () => {
      const user = 'user-actions';
      await writeChanges(sql, SCHEMA, [
        actionsRecorded(
          7,
          [
            play('e1', { device: 'phone', guid: 'g-1', started: 0, position: 95, total: 3600 }),
            play('e2', { action: 'download' }),
          ],
          user,
          T1,
        ),
        actionsRecorded(9, [play('e1', { action: 'delete', timestamp: '2023-11-14T22:13:21' })], user, T2),
      ]);
      expect(await actions(user)).toEqual([
        {
          sequence: 7,
          ordinal: 0,
          received_at: T1,
          podcast: 'https://a.example/rss',
          episode: 'e1',
          action: 'play',
          timestamp: '2023-11-14T22:13:20',
          device: 'phone',
          guid: 'g-1',
          started: 0,
          position: 95,
          total: 3600,
        },
        expect.objectContaining({
          sequence: 7,
          ordinal: 1,
          episode: 'e2',
          action: 'download',
          device: null,
          guid: null,
          started: null,
          position: null,
          total: null,
        }),
        expect.objectContaining({
          sequence: 9,
          ordinal: 0,
          received_at: T2,
          action: 'delete',
          timestamp: '2023-11-14T22:13:21',
        }),
      ]);
    });

    it('writes episode actions once: a batch applied again adds no row and changes none', async () => {
      const user = 'user-actions-again';
      const batch = [
        deviceSaved('phone', { userId: user }),
        actionsRecorded(3, [play('e1'), play('e2')], user, T1),
        clock(T1, user),
      ];
      await writeChanges(sql, SCHEMA, batch);
      const first = await actions(user);
      expect(first).toHaveLength(2);
      await writeChanges(sql, SCHEMA, batch);
      expect(await actions(user)).toEqual(first);
      // The same upload twice in one batch (a record delivered twice) too.
      await writeChanges(sql, SCHEMA, [...batch, ...batch]);
      expect(await actions(user)).toEqual(first);
      // The same upload of another user is that user's rows.
      await writeChanges(sql, SCHEMA, [actionsRecorded(3, [play('e1')], `${user}-2`)]);
      expect(await actions(`${user}-2`)).toHaveLength(1);
      expect(await actions(user)).toEqual(first);
    });
  });

  it('never moves a clock back, within a batch or against the stored one', async () => {
    const user = 'user-clock';
    await writeChanges(sql, SCHEMA, [clock(T2, user), clock(T1, user)]);
    expect((await rows(user)).clock).toEqual([T2]);
    await writeChanges(sql, SCHEMA, [clock(T1, user)]);
    expect((await rows(user)).clock).toEqual([T2]);
  });

  it('never moves a sync clock back, and leaves it where a ClockAdvanced gives none', async () => {
    const user = 'user-sync-clock';
    const both = async () => {
      const { clock: instant, syncClock } = await rows(user);
      return { instant, syncClock };
    };
    await writeChanges(sql, SCHEMA, [clock(T1, user)]);
    expect(await both()).toEqual({ instant: [T1], syncClock: [0] });
    await writeChanges(sql, SCHEMA, [clock(T2, user, T2 * 1000 + 5), clock(T2, user, T2 * 1000 + 2)]);
    expect(await both()).toEqual({ instant: [T2], syncClock: [T2 * 1000 + 5] });
    await writeChanges(sql, SCHEMA, [clock(T2 + 1, user)]);
    expect(await both()).toEqual({ instant: [T2 + 1], syncClock: [T2 * 1000 + 5] });
    await writeChanges(sql, SCHEMA, [clock(T2 + 2, user, T1 * 1000)]);
    expect(await both()).toEqual({ instant: [T2 + 2], syncClock: [T2 * 1000 + 5] });
  });

  describe('the sync face', () => {
    const syncFields = (user: string) =>
      sql.query(
        `SELECT id, sync_id, subscribed_at::float8 AS subscribed_at, unsubscribed_at::float8 AS unsubscribed_at,
                state_time::float8 AS state_time, identity_time::float8 AS identity_time,
                last_updated::float8 AS last_updated, last_client_id, sync_cursor::float8 AS sync_cursor
           FROM castlog.subscriptions WHERE user_id = $1 ORDER BY id`,
        [user],
      );
    const actionsSeen = (user: string) =>
      sql.query(
        `SELECT action_id, status, reason, fingerprint, subscription_id FROM castlog.sync_actions
          WHERE user_id = $1 ORDER BY action_id`,
        [user],
      );

    it('maps the actions seen to a statement of their own', () => {
      expect(changeWrites(SCHEMA, [seen(A1), seen(A2), clock(T1, U, T1 * 1000)]).map((w) => w.name)).toEqual([
        'clocks_written',
        'sync_actions_written',
      ]);
    });

    it("writes a subscription's sync fields, created and upserted, its sync_id as it was created", async () => {
      const user = 'user-sync-fields';
      const mine = (id: string, fields: Partial<Subscription> = {}) =>
        saved({ ...subscription(id, fields), userId: user, syncId: syncIdOf(user, id) });
      const micros = T1 * 1000 + 123;
      await writeChanges(sql, SCHEMA, [
        mine(G1, { subscribedAt: micros, stateTime: micros, identityTime: micros, lastUpdated: micros }),
        feedUrl('https://a.example/rss', G1, true, user),
        mine(G2, { lastClientId: CLIENT, syncCursor: T1 * 1000 + 1 }),
        clock(T1, user, T1 * 1000 + 1),
      ]);
      const created = {
        id: G1,
        sync_id: syncIdOf(user, G1),
        subscribed_at: micros,
        unsubscribed_at: null,
        state_time: micros,
        identity_time: micros,
        last_updated: micros,
        last_client_id: null,
        sync_cursor: T1 * 1000,
      };
      expect(await syncFields(user)).toEqual([
        created,
        {
          ...created,
          id: G2,
          sync_id: syncIdOf(user, G2),
          subscribed_at: T1 * 1000,
          state_time: T1 * 1000,
          identity_time: T1 * 1000,
          last_updated: T1 * 1000,
          last_client_id: CLIENT,
          sync_cursor: T1 * 1000 + 1,
        },
      ]);
      // An upsert writes every sync field; the sync_id never changes (it is the id's).
      const later = {
        subscribedAt: micros,
        unsubscribedAt: T2 * 1000,
        stateTime: T2 * 1000,
        identityTime: T2 * 1000 + 7,
        lastUpdated: T2 * 1000 + 7,
        lastClientId: CLIENT,
        syncCursor: T2 * 1000,
      };
      await writeChanges(sql, SCHEMA, [
        mine(G1, { ...later, syncId: syncIdOf(user, G3) }),
        clock(T2, user, T2 * 1000),
      ]);
      expect((await syncFields(user))[0]).toEqual({
        ...created,
        unsubscribed_at: T2 * 1000,
        state_time: T2 * 1000,
        identity_time: T2 * 1000 + 7,
        last_updated: T2 * 1000 + 7,
        last_client_id: CLIENT,
        sync_cursor: T2 * 1000,
      });
    });

    it('writes each action seen, the last of a key in a batch, and the same row again when redelivered', async () => {
      const user = 'user-sync-actions';
      const mine = (actionId: string, fields: Partial<SeenAction> = {}) =>
        seen(actionId, { userId: user, ...fields });
      const batch = [
        mine(A1),
        mine(A2, { status: 'rejected', reason: 'Entity not found', subscriptionId: null }),
        clock(T1, user),
      ];
      await writeChanges(sql, SCHEMA, batch);
      const first = await actionsSeen(user);
      expect(first).toEqual([
        { action_id: A1, status: 'applied', reason: null, fingerprint: 'f'.repeat(64), subscription_id: G1 },
        {
          action_id: A2,
          status: 'rejected',
          reason: 'Entity not found',
          fingerprint: 'f'.repeat(64),
          subscription_id: null,
        },
      ]);
      await writeChanges(sql, SCHEMA, batch);
      await writeChanges(sql, SCHEMA, [...batch, ...batch]);
      expect(await actionsSeen(user)).toEqual(first);
      // The same action_id of another user is that user's.
      await writeChanges(sql, SCHEMA, [seen(A1, { userId: `${user}-2`, status: 'ignored' })]);
      expect(await actionsSeen(`${user}-2`)).toEqual([
        expect.objectContaining({ action_id: A1, status: 'ignored' }),
      ]);
      expect(await actionsSeen(user)).toEqual(first);
    });
  });

  describe('gpodder.net settings', () => {
    const settingsSaved = (scope: SettingsScope, values: Record<string, unknown>, userId = U): Change => ({
      kind: 'SettingsSaved',
      settings: { userId, scopeId: settingsScopeIdOf(scope), scope, values },
    });
    const stored = (user: string) =>
      sql.query(
        `SELECT scope_id, scope, device, podcast, episode, settings FROM castlog.gpodder_settings
          WHERE user_id = $1 ORDER BY scope, device, podcast, episode`,
        [user],
      );
    const ACCOUNT: SettingsScope = { kind: 'account' };
    const EPISODE: SettingsScope = {
      kind: 'episode',
      podcast: 'https://a.example/rss',
      episode: 'https://a.example/1.mp3',
    };

    it('maps the settings saved to a statement of their own', () => {
      expect(changeWrites(SCHEMA, [settingsSaved(ACCOUNT, {}), clock(T1)]).map((w) => w.name)).toEqual([
        'clocks_written',
        'settings_written',
      ]);
    });

    it("writes each scope's row whole, with its parts, the last of a scope in a batch, replacing the row stored before", async () => {
      const user = 'user-settings';
      const values = { a: [1, 'two', { three: null }], 'é "quoted"': true, n: 1.5 };
      await writeChanges(sql, SCHEMA, [
        settingsSaved(ACCOUNT, { a: 1 }, user),
        settingsSaved(EPISODE, values, user),
        settingsSaved({ kind: 'device', deviceId: 'phone' }, { b: 2 }, user),
        settingsSaved(ACCOUNT, { a: 2, c: 3 }, user),
        clock(T1, user),
      ]);
      expect(await stored(user)).toEqual([
        {
          scope_id: settingsScopeIdOf(ACCOUNT),
          scope: 'account',
          device: null,
          podcast: null,
          episode: null,
          settings: { a: 2, c: 3 },
        },
        {
          scope_id: settingsScopeIdOf({ kind: 'device', deviceId: 'phone' }),
          scope: 'device',
          device: 'phone',
          podcast: null,
          episode: null,
          settings: { b: 2 },
        },
        {
          scope_id: settingsScopeIdOf(EPISODE),
          scope: 'episode',
          device: null,
          podcast: 'https://a.example/rss',
          episode: 'https://a.example/1.mp3',
          settings: values,
        },
      ]);
      await writeChanges(sql, SCHEMA, [settingsSaved(ACCOUNT, {}, user), clock(T2, user)]);
      expect((await stored(user))[0]).toEqual(expect.objectContaining({ scope: 'account', settings: {} }));
      // The same scope of another user is that user's.
      await writeChanges(sql, SCHEMA, [settingsSaved(ACCOUNT, { other: true }, `${user}-2`)]);
      expect(await stored(`${user}-2`)).toEqual([expect.objectContaining({ settings: { other: true } })]);
      expect((await stored(user)).length).toBe(3);
    });
  });
});
