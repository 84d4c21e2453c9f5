import { toUnixSeconds } from '@castlog/domain';
import { randomUUID } from 'node:crypto';
import { Database } from '../database';
import { openReadModelTestDatabase } from '../testing/read-model-database';
import { GpodderQuery } from './gpodder.query';

const S = 'gp';
/** A whole second: the instants below are milliseconds around it. */
const T = 1_700_000_000_000;
const [SUBS, DEVS, ACTS, OTHER, SHARED] = [
  'user-subs',
  'user-devices',
  'user-actions',
  'user-other',
  'user-shared',
];
const url = (name: string) => `https://${name}.example/rss`;

interface Row {
  readonly feedUrl: string;
  readonly isSubscribed?: boolean;
  readonly changed: number;
  readonly guidChanged?: number;
  readonly deleted?: number;
  readonly mergedInto?: string;
}

/** The gpodder.net face's reads against rows written as the projector writes them. */
describe('GpodderQuery', () => {
  let database: Database;
  let query: GpodderQuery;

  /** Stores `rows` as subscriptions of `user` (ids drawn), and the user's clock. */
  const store = async (user: string, clock: number | null, rows: readonly Row[]): Promise<string[]> => {
    const ids = rows.map(() => randomUUID());
    for (const [i, row] of rows.entries()) {
      await database.dataSource.query(
        `INSERT INTO ${S}.subscriptions (user_id, id, feed_url, is_subscribed, subscription_changed, guid_changed,
                                         deleted, merged_into, deletion_id, latest_guid, created, sync_id,
                                         subscribed_at, state_time, identity_time, last_updated, sync_cursor)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $2, $5, gen_random_uuid(), 0, 0, 0, 0, 0)`,
        [
          user,
          ids[i],
          row.feedUrl,
          row.isSubscribed ?? true,
          row.changed,
          row.guidChanged ?? null,
          row.deleted ?? null,
          row.mergedInto ?? null,
        ],
      );
    }
    if (clock !== null)
      await database.dataSource.query(
        `INSERT INTO ${S}.user_clocks (user_id, last_instant) VALUES ($1, $2)`,
        [user, clock],
      );
    return ids;
  };

  beforeAll(async () => {
    database = await openReadModelTestDatabase('gpodder_query', [S]);
    query = new GpodderQuery(database.dataSource, { schema: S });
  });
  afterAll(() => database?.close());

  describe('changesSince', () => {
    beforeAll(async () => {
      const [a] = await store(SUBS, T + 3000, [
        // Subscribed within the second T.
        { feedUrl: url('a'), changed: T + 500 },
        // Subscribed before T, and unsubscribed before T.
        { feedUrl: url('old'), changed: T - 1000 },
        { feedUrl: url('gone-early'), isSubscribed: false, changed: T - 5000 },
        // Unsubscribed, deleted, after T.
        { feedUrl: url('b'), isSubscribed: false, changed: T + 2000 },
        { feedUrl: url('c'), isSubscribed: false, changed: T + 1000, deleted: T + 3000 },
        // Another subscription with a's URL, unsubscribed: a is subscribed, so it is no removal.
        { feedUrl: url('a'), isSubscribed: false, changed: T + 600 },
      ]);
      // Merged into a (the PATCH that merged it changed its guid), still flagged subscribed.
      await store(SUBS, null, [
        { feedUrl: url('m'), changed: T - 2000, guidChanged: T + 1500, mergedInto: a },
      ]);
      await store(OTHER, T + 9000, [
        { feedUrl: url('x'), changed: T + 100 },
        { feedUrl: url('y'), isSubscribed: false, changed: T + 100 },
      ]);
    });

    it('answers what changed at or after `since`: subscribed ones in add, the rest in remove, by change time', async () =>
      expect(await query.changesSince(SUBS, T)).toEqual({
        add: [url('a')],
        remove: [url('m'), url('b'), url('c')],
        clock: T + 3000,
      }));

    it('is inclusive: a change in the same second as `since` is in, so a client sending back its timestamp misses nothing', async () => {
      const since = toUnixSeconds(T + 500);
      expect(since * 1000).toBe(T);
      expect((await query.changesSince(SUBS, since * 1000)).add).toEqual([url('a')]);
      // The clock's own second holds the last change: sent back, it is seen again, not lost.
      const { clock } = await query.changesSince(SUBS, null);
      expect((await query.changesSince(SUBS, toUnixSeconds(clock) * 1000)).remove).toEqual([url('c')]);
    });

    it('leaves out what changed before `since`', async () => {
      expect(await query.changesSince(SUBS, T + 1000)).toEqual({
        add: [],
        remove: [url('m'), url('b'), url('c')],
        clock: T + 3000,
      });
      expect(await query.changesSince(SUBS, T + 3001)).toEqual({ add: [], remove: [], clock: T + 3000 });
    });

    it('puts merged and deleted subscriptions in remove, and a URL subscribed in another row only in add', async () => {
      const { add, remove } = await query.changesSince(SUBS, T - 10_000);
      expect(add).toEqual([url('old'), url('a')]);
      expect(remove).toEqual([url('gone-early'), url('m'), url('b'), url('c')]);
    });

    it('without `since`, every subscribed URL in add, each once, and nothing in remove', async () =>
      expect(await query.changesSince(SUBS, null)).toEqual({
        add: [url('old'), url('a')],
        remove: [],
        clock: T + 3000,
      }));

    it('since 0 is no since, as CONTRACT says: nothing removed', async () =>
      expect(await query.changesSince(SUBS, 0)).toEqual(await query.changesSince(SUBS, null)));

    it("reads the user's own rows and clock only; a user with nothing answers clock 0", async () => {
      expect(await query.changesSince(OTHER, T)).toEqual({
        add: [url('x')],
        remove: [url('y')],
        clock: T + 9000,
      });
      expect(await query.changesSince('nobody', null)).toEqual({ add: [], remove: [], clock: 0 });
      expect(await query.changesSince('nobody', T)).toEqual({ add: [], remove: [], clock: 0 });
    });
  });

  describe('changesSince, with two subscriptions holding one URL', () => {
    beforeAll(async () => {
      const [, , , , moved] = await store(SHARED, T + 300, [
        { feedUrl: url('shared'), changed: T - 1000 },
        // Another subscription with shared's URL, unsubscribed after T: shared is still held.
        { feedUrl: url('shared'), isSubscribed: false, changed: T + 100 },
        // A spelling of spelt's URL, unsubscribed after T: that spelling leaves the list.
        { feedUrl: url('spelt'), changed: T - 1000 },
        { feedUrl: 'HTTPS://SPELT.example:443/rss', isSubscribed: false, changed: T + 100 },
        // Moved from older to moved-to after T, while another subscription holds older.
        { feedUrl: url('moved-to'), changed: T + 200 },
        // older, in another spelling.
        { feedUrl: 'HTTPS://OLDER.example:443/rss', changed: T - 500 },
        { feedUrl: url('gone'), isSubscribed: false, changed: T + 300 },
      ]);
      await database.dataSource.query(
        `INSERT INTO ${S}.subscription_later_feed_urls (user_id, normalized_feed_url, subscription_id) VALUES ($1, $2, $3)`,
        [SHARED, url('older'), moved],
      );
    });

    it('removes a URL as spelt only when no subscription holds it so, an older URL when none holds it in any spelling', async () =>
      expect(await query.changesSince(SHARED, T)).toEqual({
        add: [url('moved-to')],
        remove: ['HTTPS://SPELT.example:443/rss', url('gone')],
        clock: T + 300,
      }));

    it('a later `since` answers only what changed at or after it, and nothing after the last change', async () => {
      expect(await query.changesSince(SHARED, T + 250)).toEqual({
        add: [],
        remove: [url('gone')],
        clock: T + 300,
      });
      expect(await query.changesSince(SHARED, T + 301)).toEqual({ add: [], remove: [], clock: T + 300 });
    });
  });

  describe('subscribedUrls', () => {
    it('lists the subscribed URLs in the order last subscribed, each once, without merged ones', async () => {
      expect(await query.subscribedUrls(SUBS)).toEqual([url('old'), url('a')]);
      expect(await query.subscribedUrls('nobody')).toEqual([]);
    });
  });

  describe('devices', () => {
    beforeAll(async () => {
      await store(DEVS, T, [
        { feedUrl: url('a'), changed: T },
        // The same URL subscribed twice (a guid took it) counts once.
        { feedUrl: url('a'), changed: T + 1 },
        { feedUrl: url('b'), changed: T + 2 },
        { feedUrl: url('c'), isSubscribed: false, changed: T + 3 },
        { feedUrl: url('d'), changed: T + 4, deleted: T + 4 },
      ]);
      await database.dataSource.query(
        `INSERT INTO ${S}.devices (user_id, id, caption, type, last_used)
         VALUES ($1, 'tv', '', 'other', NULL), ($1, 'Phone', 'My phone', 'mobile', $3),
                ($1, 'laptop', 'Work', 'laptop', $4), ($2, 'phone', 'Not mine', 'mobile', $3)`,
        [DEVS, OTHER, T + 10, T + 11],
      );
    });

    it('lists the devices by id, each with the number of feeds the user is subscribed to and its last use', async () =>
      expect(await query.devices(DEVS)).toEqual([
        { id: 'Phone', caption: 'My phone', type: 'mobile', subscriptions: 2, lastUsed: T + 10 },
        { id: 'laptop', caption: 'Work', type: 'laptop', subscriptions: 2, lastUsed: T + 11 },
        // Stored before last uses were, and not named since: unknown.
        { id: 'tv', caption: '', type: 'other', subscriptions: 2, lastUsed: null },
      ]));

    it('a user without devices has none; devices of a user without subscriptions count 0', async () => {
      expect(await query.devices('nobody')).toEqual([]);
      expect(await query.devices(OTHER)).toEqual([
        { id: 'phone', caption: 'Not mine', type: 'mobile', subscriptions: 1, lastUsed: T + 10 },
      ]);
      await database.dataSource.query(
        `INSERT INTO ${S}.devices (user_id, id, caption, type) VALUES ('lonely', 'a', '', 'other')`,
      );
      expect(await query.devices('lonely')).toEqual([
        { id: 'a', caption: '', type: 'other', subscriptions: 0, lastUsed: null },
      ]);
    });

    it("hasDevice answers the user's own devices, case-sensitively", async () => {
      expect(await query.hasDevice(DEVS, 'Phone')).toBe(true);
      expect(await query.hasDevice(DEVS, 'phone')).toBe(false);
      expect(await query.hasDevice(OTHER, 'phone')).toBe(true);
      expect(await query.hasDevice(OTHER, 'tv')).toBe(false);
    });
  });

  describe('episodeActions', () => {
    const [P1, P2] = [url('p1'), url('p2')];
    const action = (
      episode: string,
      kind: string,
      timestamp: string,
      fields: { podcast?: string; device?: string | null; position?: number } = {},
    ) => ({
      podcast: fields.podcast ?? P1,
      episode,
      action: kind,
      timestamp,
      device: fields.device ?? null,
      guid: null,
      started: null,
      position: fields.position ?? null,
      total: null,
    });
    // Received in three uploads: at T + 200, T + 1500 and T + 2500.
    const e1Play = {
      ...action('e1', 'play', '2023-11-14T22:10:00', { device: 'phone' }),
      guid: 'g1',
      started: 5,
      position: 60,
      total: 3600,
    };
    const e2Download = action('e2', 'download', '2023-11-14T22:00:00', { device: 'tv' });
    const e1Delete = action('e1', 'delete', '2023-11-14T22:05:00', { device: 'tv' });
    const e3New = action('e3', 'new', '2023-11-14T22:20:00', { podcast: P2 });
    const e2Play = action('e2', 'play', '2023-11-14T22:00:00', { device: 'phone', position: 30 });

    beforeAll(async () => {
      await store(ACTS, T + 2500, []);
      const rows = [
        [ACTS, 10, 0, T + 200, e1Play],
        [ACTS, 10, 1, T + 200, e2Download],
        [ACTS, 11, 0, T + 1500, e1Delete],
        [ACTS, 11, 1, T + 1500, e3New],
        [ACTS, 12, 0, T + 2500, e2Play],
        [OTHER, 13, 0, T + 300, action('e1', 'play', '2023-11-14T23:00:00', { device: 'phone' })],
      ] as const;
      // Stored out of order: the answer's order is the order received, not the rows'.
      for (const [user, sequence, ordinal, receivedAt, a] of [...rows].reverse()) {
        await database.dataSource.query(
          `INSERT INTO ${S}.episode_actions (user_id, sequence, ordinal, received_at, podcast, episode, action,
                                             "timestamp", device, guid, started, position, total)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
          [
            user,
            sequence,
            ordinal,
            receivedAt,
            a.podcast,
            a.episode,
            a.action,
            a.timestamp,
            a.device,
            a.guid,
            a.started,
            a.position,
            a.total,
          ],
        );
      }
    });

    it('answers every action in the order received, with its fields as recorded, and the clock', async () =>
      expect(await query.episodeActions(ACTS, { since: 0 })).toEqual({
        actions: [e1Play, e2Download, e1Delete, e3New, e2Play],
        clock: T + 2500,
      }));

    it('since is the instant received, inclusive: an upload in the same second as `since` is in', async () => {
      expect(
        (await query.episodeActions(ACTS, { since: toUnixSeconds(T + 200) * 1000 })).actions,
      ).toHaveLength(5);
      expect((await query.episodeActions(ACTS, { since: T + 1000 })).actions).toEqual([
        e1Delete,
        e3New,
        e2Play,
      ]);
      expect((await query.episodeActions(ACTS, { since: T + 2500 })).actions).toEqual([e2Play]);
      expect(await query.episodeActions(ACTS, { since: T + 2501 })).toEqual({ actions: [], clock: T + 2500 });
    });

    it('filters by podcast and by device, together too', async () => {
      expect((await query.episodeActions(ACTS, { since: 0, podcast: P2 })).actions).toEqual([e3New]);
      expect((await query.episodeActions(ACTS, { since: 0, device: 'tv' })).actions).toEqual([
        e2Download,
        e1Delete,
      ]);
      expect((await query.episodeActions(ACTS, { since: 0, podcast: P1, device: 'phone' })).actions).toEqual([
        e1Play,
        e2Play,
      ]);
      expect((await query.episodeActions(ACTS, { since: 0, podcast: url('none') })).actions).toEqual([]);
    });

    it('aggregated keeps the latest action of each episode by its timestamp, a tie going to the one received last', async () => {
      // e1: the play at 22:10 beats the delete received later with 22:05; e2: both at 22:00, the play came last.
      expect((await query.episodeActions(ACTS, { since: 0, aggregated: true })).actions).toEqual([
        e1Play,
        e3New,
        e2Play,
      ]);
    });

    it('aggregates only what the filters keep', async () => {
      expect((await query.episodeActions(ACTS, { since: T + 1000, aggregated: true })).actions).toEqual([
        e1Delete,
        e3New,
        e2Play,
      ]);
      expect(
        (await query.episodeActions(ACTS, { since: 0, device: 'tv', aggregated: true })).actions,
      ).toEqual([e2Download, e1Delete]);
    });

    it("reads the user's own actions; a user without any answers none and clock 0", async () => {
      expect((await query.episodeActions(OTHER, { since: 0 })).actions).toEqual([
        action('e1', 'play', '2023-11-14T23:00:00', { device: 'phone' }),
      ]);
      expect(await query.episodeActions('nobody', { since: 0 })).toEqual({ actions: [], clock: 0 });
    });
  });
});
