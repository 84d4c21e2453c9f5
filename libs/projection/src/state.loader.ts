import {
  BatchKeys,
  Deletion,
  DeletionStatus,
  Device,
  DeviceType,
  GuidEntry,
  initialState,
  ScopeSettings,
  SeenAction,
  SettingsScope,
  SettingsScopeKind,
  Subscription,
  SyncStatus,
  UserSubscriptions,
} from '@castlog/domain';
import {
  bigints,
  Param,
  parameters,
  quoteIdent,
  Sql,
  SqlArray,
  texts,
  UserClocks,
  uuids,
} from '@castlog/read-model';

export interface SubscriptionRow {
  user_id: string;
  id: string;
  feed_url: string;
  is_subscribed: boolean;
  subscription_changed: string;
  guid_changed: string | null;
  deleted: string | null;
  merged_into: string | null;
  deletion_id: string | null;
  latest_guid: string;
  created: string;
  created_feed_url: string | null;
  sync_id: string;
  subscribed_at: string;
  unsubscribed_at: string | null;
  state_time: string;
  identity_time: string;
  last_updated: string;
  last_client_id: string | null;
  sync_cursor: string;
}

function groupBy<T>(rows: readonly T[], keyOf: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const k = keyOf(row);
    const group = groups.get(k);
    if (group) group.push(row);
    else groups.set(k, [row]);
  }
  return groups;
}

const num = (value: string | null): number | null => (value === null ? null : Number(value));

/** The subscriptions each kind of key names, by user and id: one SELECT each, every key one
 * primary-key (or unique-index) probe. */
const seedsOf = (s: string, keys: BatchKeys, p: Param): string[] => {
  const pairs = <T>(pairs: readonly (readonly [string, T])[], values: (values: T[]) => SqlArray) =>
    `unnest(${p(texts(pairs.map(([u]) => u)))}, ${p(values(pairs.map(([, v]) => v)))})`;
  return [
    `SELECT k.user_id, g.subscription_id FROM ${pairs(keys.guids, uuids)} AS k(user_id, guid)
       CROSS JOIN LATERAL (SELECT sub.id AS subscription_id FROM ${s}.subscriptions sub
                            WHERE sub.user_id = k.user_id AND sub.id = k.guid
                           UNION ALL
                           SELECT g.subscription_id FROM ${s}.subscription_later_guids g
                            WHERE g.user_id = k.user_id AND g.guid = k.guid LIMIT 1) g`,
    // A feed_url's holder: its later claim, else the subscription created with it (both keys unique).
    `SELECT k.user_id, f.subscription_id FROM ${pairs(keys.feedUrls, texts)} AS k(user_id, url)
       CROSS JOIN LATERAL (SELECT coalesce(
                             (SELECT f.subscription_id FROM ${s}.subscription_later_feed_urls f
                               WHERE f.user_id = k.user_id AND f.normalized_feed_url = k.url),
                             (SELECT sub.id FROM ${s}.subscriptions sub
                               WHERE sub.user_id = k.user_id AND sub.created_feed_url = k.url)) AS subscription_id) f
      WHERE f.subscription_id IS NOT NULL`,
    `SELECT k.user_id, d.subscription_id FROM ${pairs(keys.deletionIds, bigints)} AS k(user_id, deletion_id)
       CROSS JOIN LATERAL (SELECT d.subscription_id FROM ${s}.deletions d
                            WHERE d.deletion_id = k.deletion_id AND d.user_id = k.user_id LIMIT 1) d`,
    `SELECT k.user_id, sub.id FROM ${pairs(keys.syncIds, uuids)} AS k(user_id, sync_id)
       CROSS JOIN LATERAL (SELECT sub.id FROM ${s}.subscriptions sub
                            WHERE sub.user_id = k.user_id AND sub.sync_id = k.sync_id LIMIT 1) sub`,
    // The subscription a seen action acted on.
    `SELECT k.user_id, a.subscription_id FROM ${pairs(keys.actionIds, uuids)} AS k(user_id, action_id)
       CROSS JOIN LATERAL (SELECT a.subscription_id FROM ${s}.sync_actions a
                            WHERE a.user_id = k.user_id AND a.action_id = k.action_id
                              AND a.subscription_id IS NOT NULL LIMIT 1) a`,
    `SELECT sub.user_id, sub.id FROM ${s}.subscriptions sub WHERE sub.user_id = ANY(${p(texts([...keys.wholeUsers]))})`,
  ];
};

/** The statement that reads the subscriptions the keys reach (`loadStates`' first query; the
 * projector sends it with its locks). Every key and every step is one primary-key probe: LATERAL …
 * LIMIT 1 keeps the planner from hashing a whole table per batch, which made catch-up quadratic in
 * the read model's size. */
export const reachedSubscriptionsStatement = (schema: string, keys: BatchKeys, p: Param): string => {
  const s = quoteIdent(schema);
  return `WITH RECURSIVE seed(user_id, id) AS (
         ${seedsOf(s, keys, p).join('\n         UNION\n         ')}
       ),
       reach(user_id, id) AS (
         SELECT user_id, id FROM seed
         UNION
         SELECT r.user_id, m.merged_into FROM reach r
           CROSS JOIN LATERAL (SELECT sub.merged_into FROM ${s}.subscriptions sub
                                WHERE sub.user_id = r.user_id AND sub.id = r.id AND sub.merged_into IS NOT NULL
                                LIMIT 1) m
       )
     SELECT sub.user_id, sub.id, sub.feed_url, sub.is_subscribed, sub.subscription_changed, sub.guid_changed,
            sub.deleted, sub.merged_into, sub.deletion_id, sub.latest_guid, sub.created, sub.created_feed_url, sub.sync_id,
            sub.subscribed_at, sub.unsubscribed_at, sub.state_time, sub.identity_time, sub.last_updated,
            sub.last_client_id, sub.sync_cursor
       FROM reach r
       CROSS JOIN LATERAL (SELECT * FROM ${s}.subscriptions sub WHERE sub.user_id = r.user_id AND sub.id = r.id
                            LIMIT 1) sub`;
};

const reachedSubscriptions = (sql: Sql, schema: string, keys: BatchKeys) => {
  const { param, params } = parameters();
  return sql.query<SubscriptionRow>(reachedSubscriptionsStatement(schema, keys, param), params);
};

interface GuidRow {
  user_id: string;
  guid: string;
  subscription_id: string;
  since: string;
}

interface FeedUrlRow {
  user_id: string;
  normalized_feed_url: string;
  subscription_id: string;
}

interface DeletionRow {
  deletion_id: string;
  user_id: string;
  subscription_id: string;
  status: DeletionStatus;
  requested_at: string;
  finished_at: string | null;
}

interface DeviceRow {
  user_id: string;
  id: string;
  caption: string;
  type: DeviceType;
  last_used: string | null;
}

interface SeenActionRow {
  user_id: string;
  action_id: string;
  status: SyncStatus;
  reason: string | null;
  fingerprint: string;
  subscription_id: string | null;
}

interface SettingsRow {
  user_id: string;
  scope_id: string;
  scope: SettingsScopeKind;
  device: string | null;
  podcast: string | null;
  episode: string | null;
  settings: Record<string, unknown>;
}

/** What `readChains` reads. */
interface ChainRows {
  readonly guidRows: readonly GuidRow[];
  readonly urlRows: readonly FeedUrlRow[];
  readonly takenRows: readonly { user_id: string; normalized_feed_url: string }[];
}

/** What `readNamed` reads. */
interface NamedRows {
  readonly deletionRows: readonly DeletionRow[];
  readonly deviceRows: readonly DeviceRow[];
  readonly seenRows: readonly SeenActionRow[];
  readonly settingsRows: readonly SettingsRow[];
}

const key = (userId: string, id: string) => `${userId}\u0000${id}`;

/** The later guids and feed_urls of the subscriptions read, and which of their creation feed_urls a
 * later claim took. Each query runs only when it has something to look up: a batch of new feeds
 * needs none; and one after another, as a transaction's connection runs one at a time. */
async function readChains(
  sql: Sql,
  s: string,
  subscriptions: readonly SubscriptionRow[],
): Promise<ChainRows> {
  const owners = [subscriptions.map((r) => r.user_id), subscriptions.map((r) => r.id)];
  const createdWith = subscriptions.filter((r) => r.created_feed_url !== null);
  const guidRows =
    subscriptions.length === 0
      ? []
      : await sql.query<GuidRow>(
          `SELECT g.user_id, g.guid, g.subscription_id, g.since FROM ${s}.subscription_later_guids g
             JOIN unnest($1::text[], $2::uuid[]) AS o(user_id, id) ON g.user_id = o.user_id AND g.subscription_id = o.id
            ORDER BY g.user_id, g.subscription_id, g.position`,
          owners,
        );
  const urlRows =
    subscriptions.length === 0
      ? []
      : await sql.query<FeedUrlRow>(
          `SELECT f.user_id, f.normalized_feed_url, f.subscription_id FROM ${s}.subscription_later_feed_urls f
             JOIN unnest($1::text[], $2::uuid[]) AS o(user_id, id) ON f.user_id = o.user_id AND f.subscription_id = o.id`,
          owners,
        );
  // The creation feed_urls a later claim took: those map to their later holder.
  const takenRows =
    createdWith.length === 0
      ? []
      : await sql.query<{ user_id: string; normalized_feed_url: string }>(
          `SELECT f.user_id, f.normalized_feed_url FROM ${s}.subscription_later_feed_urls f
             JOIN unnest($1::text[], $2::text[]) AS k(user_id, url)
               ON f.user_id = k.user_id AND f.normalized_feed_url = k.url`,
          [createdWith.map((r) => r.user_id), createdWith.map((r) => r.created_feed_url)],
        );
  return { guidRows, urlRows, takenRows };
}

/** The deletions named and those attached to the subscriptions read, each of its own user, the
 * devices named, the sync actions named that were seen before and the settings scopes named that
 * hold settings; again each query only when it has keys. */
async function readNamed(
  sql: Sql,
  s: string,
  subscriptions: readonly SubscriptionRow[],
  keys: BatchKeys,
): Promise<NamedRows> {
  const deletionKeys = [
    ...subscriptions
      .filter((r) => r.deletion_id !== null)
      .map((r) => [r.user_id, Number(r.deletion_id)] as const),
    ...keys.deletionIds,
  ];
  const byKeys = <R>(pairs: readonly (readonly [string, unknown])[], text: string): Promise<R[]> =>
    pairs.length === 0
      ? Promise.resolve([])
      : sql.query<R>(text, [pairs.map(([u]) => u), pairs.map(([, k]) => k)]);
  const deletionRows = await byKeys<DeletionRow>(
    deletionKeys,
    `SELECT d.* FROM unnest($1::text[], $2::bigint[]) AS k(user_id, deletion_id)
       JOIN ${s}.deletions d ON d.deletion_id = k.deletion_id AND d.user_id = k.user_id`,
  );
  const deviceRows = await byKeys<DeviceRow>(
    keys.deviceIds,
    `SELECT d.user_id, d.id, d.caption, d.type, d.last_used FROM unnest($1::text[], $2::text[]) AS k(user_id, id)
       JOIN ${s}.devices d ON d.user_id = k.user_id AND d.id = k.id`,
  );
  const seenRows = await byKeys<SeenActionRow>(
    keys.actionIds,
    `SELECT a.user_id, a.action_id, a.status, a.reason, a.fingerprint, a.subscription_id
       FROM unnest($1::text[], $2::uuid[]) AS k(user_id, action_id)
       JOIN ${s}.sync_actions a ON a.user_id = k.user_id AND a.action_id = k.action_id`,
  );
  const settingsRows = await byKeys<SettingsRow>(
    keys.settingsScopes,
    `SELECT g.user_id, g.scope_id, g.scope, g.device, g.podcast, g.episode, g.settings
       FROM unnest($1::text[], $2::uuid[]) AS k(user_id, scope_id)
       JOIN ${s}.gpodder_settings g ON g.user_id = k.user_id AND g.scope_id = k.scope_id`,
  );
  return { deletionRows, deviceRows, seenRows, settingsRows };
}

/** The rows read, grouped for assembling the states: by user, and the chains by subscription. */
interface StateRows {
  readonly subscriptionsOf: ReadonlyMap<string, SubscriptionRow[]>;
  readonly guidsOf: ReadonlyMap<string, GuidEntry[]>;
  readonly urlsOf: ReadonlyMap<string, string[]>;
  /** The creation feed_urls a later claim took, by user and url. */
  readonly taken: ReadonlySet<string>;
  readonly deletionsOf: ReadonlyMap<string, DeletionRow[]>;
  readonly devicesOf: ReadonlyMap<string, DeviceRow[]>;
  readonly seenOf: ReadonlyMap<string, SeenActionRow[]>;
  readonly settingsOf: ReadonlyMap<string, SettingsRow[]>;
}

function groupStateRows(
  subscriptions: readonly SubscriptionRow[],
  chains: ChainRows,
  others: NamedRows,
): StateRows {
  const taken = new Set(chains.takenRows.map((row) => key(row.user_id, row.normalized_feed_url)));
  const guidsOf = new Map<string, GuidEntry[]>();
  for (const [k, rows] of groupBy(chains.guidRows, (row) => key(row.user_id, row.subscription_id))) {
    guidsOf.set(
      k,
      rows.map((row) => ({ guid: row.guid, since: Number(row.since) })),
    );
  }
  const urlsOf = new Map<string, string[]>();
  for (const [k, rows] of groupBy(chains.urlRows, (row) => key(row.user_id, row.subscription_id))) {
    urlsOf.set(
      k,
      rows.map((row) => row.normalized_feed_url),
    );
  }
  return {
    subscriptionsOf: groupBy(subscriptions, (row) => row.user_id),
    guidsOf,
    urlsOf,
    taken,
    deletionsOf: groupBy(others.deletionRows, (row) => row.user_id),
    devicesOf: groupBy(others.deviceRows, (row) => row.user_id),
    seenOf: groupBy(others.seenRows, (row) => row.user_id),
    settingsOf: groupBy(others.settingsRows, (row) => row.user_id),
  };
}

/** The maps a user's state finds its subscriptions by. */
interface Indexes {
  readonly byGuid: Map<string, string>;
  readonly byFeedUrl: Map<string, string>;
  readonly bySyncId: Map<string, string>;
}

/** A subscription as its row (and its later guids) hold it. */
const subscriptionOf = (userId: string, row: SubscriptionRow, guids: GuidEntry[]): Subscription => ({
  userId,
  id: row.id,
  guids,
  guid: row.latest_guid,
  feedUrl: row.feed_url,
  isSubscribed: row.is_subscribed,
  subscriptionChanged: Number(row.subscription_changed),
  guidChanged: num(row.guid_changed),
  deleted: num(row.deleted),
  mergedInto: row.merged_into,
  deletionId: num(row.deletion_id),
  syncId: row.sync_id,
  subscribedAt: Number(row.subscribed_at),
  unsubscribedAt: num(row.unsubscribed_at),
  stateTime: Number(row.state_time),
  identityTime: Number(row.identity_time),
  lastUpdated: Number(row.last_updated),
  lastClientId: row.last_client_id,
  syncCursor: Number(row.sync_cursor),
});

/** Adds a subscription row, with its own first guid before its later ones, to a user's state: to
 * `subs`, its guids and feed_urls to `byGuid` and `byFeedUrl`, and its sync_id to `bySyncId`; its
 * creation feed_url maps to it unless a later claim took it. */
function addSubscription(
  userId: string,
  row: SubscriptionRow,
  found: StateRows,
  subs: Map<string, Subscription>,
  { byGuid, byFeedUrl, bySyncId }: Indexes,
): void {
  const guids = [
    { guid: row.id, since: Number(row.created) },
    ...(found.guidsOf.get(key(userId, row.id)) ?? []),
  ];
  subs.set(row.id, subscriptionOf(userId, row, guids));
  for (const entry of guids) byGuid.set(entry.guid, row.id);
  for (const url of found.urlsOf.get(key(userId, row.id)) ?? []) byFeedUrl.set(url, row.id);
  if (row.created_feed_url !== null && !found.taken.has(key(userId, row.created_feed_url)))
    byFeedUrl.set(row.created_feed_url, row.id);
  bySyncId.set(row.sync_id, row.id);
}

/** A settings scope as its row holds it (the parts its kind has, each stored non-null). */
const scopeOf = (row: SettingsRow): SettingsScope => {
  switch (row.scope) {
    case 'account':
      return { kind: 'account' };
    case 'device':
      return { kind: 'device', deviceId: row.device as string };
    case 'podcast':
      return { kind: 'podcast', podcast: row.podcast as string };
    case 'episode':
      return { kind: 'episode', podcast: row.podcast as string, episode: row.episode as string };
  }
};

const scopeSettingsOf = (userId: string, row: SettingsRow): ScopeSettings => ({
  userId,
  scopeId: row.scope_id,
  scope: scopeOf(row),
  values: row.settings,
});

/** A user's state, as far as the rows read reach, at the given clocks. */
function stateOf(userId: string, clocks: UserClocks, found: StateRows): UserSubscriptions {
  const subs = new Map<string, Subscription>();
  const indexes: Indexes = { byGuid: new Map(), byFeedUrl: new Map(), bySyncId: new Map() };
  for (const row of found.subscriptionsOf.get(userId) ?? [])
    addSubscription(userId, row, found, subs, indexes);
  const deletions = new Map<number, Deletion>();
  for (const row of found.deletionsOf.get(userId) ?? []) {
    deletions.set(Number(row.deletion_id), {
      userId,
      deletionId: Number(row.deletion_id),
      subscriptionId: row.subscription_id,
      status: row.status,
      requestedAt: Number(row.requested_at),
      finishedAt: num(row.finished_at),
    });
  }
  const devices = new Map<string, Device>();
  for (const row of found.devicesOf.get(userId) ?? []) {
    devices.set(row.id, {
      userId,
      id: row.id,
      caption: row.caption,
      type: row.type,
      lastUsed: num(row.last_used),
    });
  }
  const seenActions = new Map<string, SeenAction>();
  for (const row of found.seenOf.get(userId) ?? []) {
    seenActions.set(row.action_id, {
      userId,
      actionId: row.action_id,
      status: row.status,
      reason: row.reason,
      fingerprint: row.fingerprint,
      subscriptionId: row.subscription_id,
    });
  }
  const settings = new Map(
    (found.settingsOf.get(userId) ?? []).map((row) => [row.scope_id, scopeSettingsOf(userId, row)]),
  );
  return {
    ...initialState(userId, clocks.lastInstant),
    subscriptions: subs,
    ...indexes,
    deletions,
    devices,
    syncClock: clocks.syncClock,
    seenActions,
    settings,
  };
}

/** Loads, for every user of the batch, the part of the user's state its keys reach (`reach` in the
 * domain, which says what that is): the subscriptions named (every one of a whole user, those of
 * the sync_ids named and those the sync actions named acted on) and those they are merged into,
 * with their guid chains, the feed_urls and sync_ids mapping to them, the deletions named or
 * attached, the devices named, the sync actions named that were seen before, the settings scopes
 * named, and the user's clocks. Callers hold the users' clock rows locked.
 * It reads the tables behind the views `subscription_guids` and `subscription_feed_urls` and each
 * subscription's own first guid and creation feed_url, as those views do, one index probe a key.
 * `reached`: the rows of `reachedSubscriptionsStatement` for these keys, when the caller read them
 * (under the same locks); else they are read here. */
export async function loadStates(
  sql: Sql,
  schema: string,
  keys: BatchKeys,
  clocks: ReadonlyMap<string, UserClocks>,
  reached?: readonly SubscriptionRow[],
): Promise<Map<string, UserSubscriptions>> {
  const s = quoteIdent(schema);
  const subscriptions = reached ?? (await reachedSubscriptions(sql, schema, keys));
  const chains = await readChains(sql, s, subscriptions);
  const others = await readNamed(sql, s, subscriptions, keys);
  const found = groupStateRows(subscriptions, chains, others);
  const states = new Map<string, UserSubscriptions>();
  for (const userId of keys.users)
    states.set(userId, stateOf(userId, clocks.get(userId) ?? { lastInstant: 0, syncClock: 0 }, found));
  return states;
}
