import {
  Change,
  Deletion,
  Device,
  Instant,
  Micros,
  RequestOutcome,
  ScopeSettings,
  SeenAction,
  Subscription,
} from '@castlog/domain';
import {
  bigints,
  booleans,
  ints,
  Param,
  parameters,
  quoteIdent,
  Sql,
  texts,
  uuids,
} from '@castlog/read-model';

export interface OutcomeRow {
  readonly partition: number;
  readonly offset: number;
  readonly userId: string;
  readonly eventId: string;
  readonly requestId: string;
  readonly eventType: string;
  readonly instant: number;
  readonly outcome: RequestOutcome;
}

/** One data-modifying statement of a write, run as a CTE of a single statement with the others. */
export interface Write {
  readonly name: string;
  readonly text: (param: Param) => string;
}

/** Every write as one statement (a data-modifying CTE each, then `main`, which may read the CTEs'
 * RETURNING rows): one round trip however many tables a batch touches. The tables written are
 * distinct and have no foreign keys, so the CTEs, which cannot see each other's rows, never need to.
 * `param` places the values: as parameters (`parameters`) or as literals (`sqlLiteral`). */
export function writeStatement(
  writes: readonly Write[],
  param: Param,
  main: (param: Param) => string = () => 'SELECT 1',
): string {
  const ctes = writes.map((write) => `${write.name} AS (${write.text(param)})`);
  return `${ctes.length > 0 ? `WITH ${ctes.join(',\n')}\n` : ''}${main(param)}`;
}

/** Runs every write as one statement with parameters (`writeStatement`). */
export async function runWrites<T = Record<string, unknown>>(
  sql: Sql,
  writes: readonly Write[],
  main?: (param: Param) => string,
): Promise<T[]> {
  const { param, params } = parameters();
  const text = writeStatement(writes, param, main);
  return sql.query<T>(text, params);
}

type GuidRecorded = Extract<Change, { kind: 'GuidRecorded' }>;
type EpisodeActionsRecorded = Extract<Change, { kind: 'EpisodeActionsRecorded' }>;

/** A feed_url a subscription takes after its creation. */
interface LaterFeedUrl {
  readonly userId: string;
  readonly url: string;
  readonly subscriptionId: string;
}

/** A batch's changes by the table they go to, keyed so that the last change of each key wins. */
interface BatchRows {
  readonly subscriptions: Map<string, Subscription>;
  readonly guids: Map<string, GuidRecorded>;
  readonly feedUrls: Map<string, LaterFeedUrl>;
  /** The feed_url each subscription created in the batch is created with, by user and id. */
  readonly createdWith: Map<string, string>;
  readonly deletions: Map<number, Deletion>;
  readonly clocks: Map<string, Clocks>;
  readonly devices: Map<string, Device>;
  readonly actionUploads: EpisodeActionsRecorded[];
  readonly seenActions: Map<string, SeenAction>;
  readonly settings: Map<string, ScopeSettings>;
}

/** A user's clocks after the batch: each the greatest a change of it gave (0 for a sync clock no
 * change gave, which the stored one is never lowered to). */
interface Clocks {
  readonly lastInstant: Instant;
  readonly syncClock: Micros;
}

/** The clocks after `change`, from those earlier changes of the batch gave (if any). */
const advance = (before: Clocks | undefined, change: Extract<Change, { kind: 'ClockAdvanced' }>): Clocks => ({
  lastInstant: Math.max(before?.lastInstant ?? 0, change.lastInstant),
  syncClock: Math.max(before?.syncClock ?? 0, change.syncClock ?? 0),
});

const userKey = (userId: string, id: string): string => `${userId}\u0000${id}`;

/** One pass over the changes, each to the rows of its table: rows are whole, so only the last of
 * each key is kept, as `evolve` keeps the last. */
function batchRows(changes: readonly Change[]): BatchRows {
  const rows: BatchRows = {
    subscriptions: new Map(),
    guids: new Map(),
    feedUrls: new Map(),
    createdWith: new Map(),
    deletions: new Map(),
    clocks: new Map(),
    devices: new Map(),
    actionUploads: [],
    seenActions: new Map(),
    settings: new Map(),
  };
  for (const change of changes) {
    switch (change.kind) {
      case 'SubscriptionSaved':
        rows.subscriptions.set(
          userKey(change.subscription.userId, change.subscription.id),
          change.subscription,
        );
        break;
      case 'GuidRecorded':
        if (change.position > 0) rows.guids.set(userKey(change.userId, change.guid), change);
        break;
      case 'FeedUrlRecorded':
        // A feed_url taken at creation was nobody's: no claim of it comes before in the batch.
        if (change.atCreation)
          rows.createdWith.set(userKey(change.userId, change.subscriptionId), change.normalizedFeedUrl);
        else
          rows.feedUrls.set(userKey(change.userId, change.normalizedFeedUrl), {
            userId: change.userId,
            url: change.normalizedFeedUrl,
            subscriptionId: change.subscriptionId,
          });
        break;
      case 'DeletionSaved':
        rows.deletions.set(change.deletion.deletionId, change.deletion);
        break;
      case 'ClockAdvanced':
        rows.clocks.set(change.userId, advance(rows.clocks.get(change.userId), change));
        break;
      case 'ActionSeen':
        rows.seenActions.set(userKey(change.action.userId, change.action.actionId), change.action);
        break;
      case 'DeviceSaved':
        rows.devices.set(userKey(change.device.userId, change.device.id), change.device);
        break;
      case 'EpisodeActionsRecorded':
        rows.actionUploads.push(change);
        break;
      case 'SettingsSaved':
        rows.settings.set(userKey(change.settings.userId, change.settings.scopeId), change.settings);
        break;
      default: {
        const never: never = change;
        throw new Error(`unknown change ${JSON.stringify(never)}`);
      }
    }
  }
  return rows;
}

/** The INSERT of whole subscription rows, with each one's latest guid, its first guid's `since`
 * (`created`) and the feed_url it was created with, if in this batch. */
const subscriptionInsert = (
  s: string,
  p: Param,
  rows: readonly Subscription[],
  createdWith: ReadonlyMap<string, string>,
) => {
  const column = <T>(pick: (row: Subscription) => T) => rows.map(pick);
  return `
        INSERT INTO ${s}.subscriptions (user_id, id, feed_url, is_subscribed, subscription_changed, guid_changed,
                                        deleted, merged_into, deletion_id, latest_guid, created, created_feed_url,
                                        sync_id, subscribed_at, unsubscribed_at, state_time, identity_time,
                                        last_updated, last_client_id, sync_cursor)
        SELECT * FROM unnest(${p(texts(column((x) => x.userId)))}, ${p(uuids(column((x) => x.id)))},
                             ${p(texts(column((x) => x.feedUrl)))}, ${p(booleans(column((x) => x.isSubscribed)))},
                             ${p(bigints(column((x) => x.subscriptionChanged)))},
                             ${p(bigints(column((x) => x.guidChanged)))}, ${p(bigints(column((x) => x.deleted)))},
                             ${p(uuids(column((x) => x.mergedInto)))}, ${p(bigints(column((x) => x.deletionId)))},
                             ${p(uuids(column((x) => x.guid)))},
                             ${p(bigints(column((x) => x.guids[0]?.since)))},
                             ${p(texts(column((x) => createdWith.get(userKey(x.userId, x.id)) ?? null)))},
                             ${p(uuids(column((x) => x.syncId)))}, ${p(bigints(column((x) => x.subscribedAt)))},
                             ${p(bigints(column((x) => x.unsubscribedAt)))}, ${p(bigints(column((x) => x.stateTime)))},
                             ${p(bigints(column((x) => x.identityTime)))}, ${p(bigints(column((x) => x.lastUpdated)))},
                             ${p(uuids(column((x) => x.lastClientId)))}, ${p(bigints(column((x) => x.syncCursor)))})`;
};

/** A subscription created in this batch has no row yet (the stored offsets apply each event once),
 * so its row goes in by a plain INSERT, which skips the conflict check and the confirmation an
 * upsert writes per row; should the key be taken after all, the statement fails instead of
 * overwriting another subscription. The others are upserted. */
function subscriptionWrites(
  s: string,
  subscriptions: ReadonlyMap<string, Subscription>,
  createdWith: ReadonlyMap<string, string>,
): Write[] {
  const created: Subscription[] = [];
  const existing: Subscription[] = [];
  for (const x of subscriptions.values())
    (createdWith.has(userKey(x.userId, x.id)) ? created : existing).push(x);
  const writes: Write[] = [];
  // An upsert leaves the row's `created`, `created_feed_url` and `sync_id`: fixed at its creation.
  if (created.length > 0) {
    writes.push({
      name: 'subscriptions_created',
      text: (p) => subscriptionInsert(s, p, created, createdWith),
    });
  }
  if (existing.length > 0) {
    writes.push({
      name: 'subscriptions_written',
      text: (p) => `${subscriptionInsert(s, p, existing, createdWith)}
        ON CONFLICT (user_id, id) DO UPDATE SET
          feed_url = EXCLUDED.feed_url, is_subscribed = EXCLUDED.is_subscribed,
          subscription_changed = EXCLUDED.subscription_changed, guid_changed = EXCLUDED.guid_changed,
          deleted = EXCLUDED.deleted, merged_into = EXCLUDED.merged_into, deletion_id = EXCLUDED.deletion_id,
          latest_guid = EXCLUDED.latest_guid, subscribed_at = EXCLUDED.subscribed_at,
          unsubscribed_at = EXCLUDED.unsubscribed_at, state_time = EXCLUDED.state_time,
          identity_time = EXCLUDED.identity_time, last_updated = EXCLUDED.last_updated,
          last_client_id = EXCLUDED.last_client_id, sync_cursor = EXCLUDED.sync_cursor`,
    });
  }
  return writes;
}

/** A subscription's guid chain after its first, in position order. */
const laterGuidsWrite = (s: string, guids: readonly GuidRecorded[]): Write => ({
  name: 'guids_written',
  text: (p) => `
        INSERT INTO ${s}.subscription_later_guids (user_id, guid, subscription_id, since, position)
        SELECT * FROM unnest(${p(texts(guids.map((g) => g.userId)))}, ${p(uuids(guids.map((g) => g.guid)))},
                             ${p(uuids(guids.map((g) => g.subscriptionId)))}, ${p(bigints(guids.map((g) => g.since)))},
                             ${p(ints(guids.map((g) => g.position)))})
        ON CONFLICT (user_id, guid) DO UPDATE SET
          subscription_id = EXCLUDED.subscription_id, since = EXCLUDED.since, position = EXCLUDED.position`,
});

const laterFeedUrlsWrite = (s: string, urls: readonly LaterFeedUrl[]): Write => ({
  name: 'feed_urls_written',
  text: (p) => `
        INSERT INTO ${s}.subscription_later_feed_urls (user_id, normalized_feed_url, subscription_id)
        SELECT * FROM unnest(${p(texts(urls.map((u) => u.userId)))}, ${p(texts(urls.map((u) => u.url)))},
                             ${p(uuids(urls.map((u) => u.subscriptionId)))})
        ON CONFLICT (user_id, normalized_feed_url) DO UPDATE SET subscription_id = EXCLUDED.subscription_id`,
});

const deletionsWrite = (s: string, dels: readonly Deletion[]): Write => ({
  name: 'deletions_written',
  text: (p) => `
        INSERT INTO ${s}.deletions (deletion_id, user_id, subscription_id, status, requested_at, finished_at)
        SELECT * FROM unnest(${p(bigints(dels.map((d) => d.deletionId)))}, ${p(texts(dels.map((d) => d.userId)))},
                             ${p(uuids(dels.map((d) => d.subscriptionId)))}, ${p(texts(dels.map((d) => d.status)))},
                             ${p(bigints(dels.map((d) => d.requestedAt)))}, ${p(bigints(dels.map((d) => d.finishedAt)))})
        ON CONFLICT (deletion_id) DO UPDATE SET status = EXCLUDED.status, finished_at = EXCLUDED.finished_at`,
});

/** A user's clocks only move forward, whichever transaction writes them. */
const clocksWrite = (s: string, clocks: ReadonlyMap<string, Clocks>): Write => ({
  name: 'clocks_written',
  text: (p) => `
        INSERT INTO ${s}.user_clocks (user_id, last_instant, sync_clock)
        SELECT * FROM unnest(${p(texts([...clocks.keys()]))}, ${p(bigints([...clocks.values()].map((c) => c.lastInstant)))},
                             ${p(bigints([...clocks.values()].map((c) => c.syncClock)))})
        ON CONFLICT (user_id) DO UPDATE SET
          last_instant = greatest(${s}.user_clocks.last_instant, EXCLUDED.last_instant),
          sync_clock = greatest(${s}.user_clocks.sync_clock, EXCLUDED.sync_clock)`,
});

/** A sync action is seen once (a later sending of its action_id is answered from its row): a
 * redelivered one writes the same row again. */
const seenActionsWrite = (s: string, seen: readonly SeenAction[]): Write => ({
  name: 'sync_actions_written',
  text: (p) => `
        INSERT INTO ${s}.sync_actions (user_id, action_id, status, reason, fingerprint, subscription_id)
        SELECT * FROM unnest(${p(texts(seen.map((a) => a.userId)))}, ${p(uuids(seen.map((a) => a.actionId)))},
                             ${p(texts(seen.map((a) => a.status)))}, ${p(texts(seen.map((a) => a.reason)))},
                             ${p(texts(seen.map((a) => a.fingerprint)))}, ${p(uuids(seen.map((a) => a.subscriptionId)))})
        ON CONFLICT (user_id, action_id) DO UPDATE SET
          status = EXCLUDED.status, reason = EXCLUDED.reason, fingerprint = EXCLUDED.fingerprint,
          subscription_id = EXCLUDED.subscription_id`,
});

const devicesWrite = (s: string, devs: readonly Device[]): Write => ({
  name: 'devices_written',
  text: (p) => `
        INSERT INTO ${s}.devices (user_id, id, caption, type, last_used)
        SELECT * FROM unnest(${p(texts(devs.map((d) => d.userId)))}, ${p(texts(devs.map((d) => d.id)))},
                             ${p(texts(devs.map((d) => d.caption)))}, ${p(texts(devs.map((d) => d.type)))},
                             ${p(bigints(devs.map((d) => d.lastUsed)))})
        ON CONFLICT (user_id, id) DO UPDATE SET
          caption = EXCLUDED.caption, type = EXCLUDED.type, last_used = EXCLUDED.last_used`,
});

/** Settings rows are whole: the scope's every key. They go as one JSON document, as the outcomes do
 * (`outcomeWrites`): each scope's values are JSON themselves. */
const settingsWrite = (s: string, scopes: readonly ScopeSettings[]): Write => {
  const rows = JSON.stringify(
    scopes.map(({ userId, scopeId, scope, values }) => ({
      user_id: userId,
      scope_id: scopeId,
      scope: scope.kind,
      device: scope.kind === 'device' ? scope.deviceId : null,
      podcast: scope.kind === 'podcast' || scope.kind === 'episode' ? scope.podcast : null,
      episode: scope.kind === 'episode' ? scope.episode : null,
      settings: values,
    })),
  );
  return {
    name: 'settings_written',
    text: (p) => `
        INSERT INTO ${s}.gpodder_settings (user_id, scope_id, scope, device, podcast, episode, settings)
        SELECT * FROM jsonb_to_recordset(${p(rows)}::jsonb)
          AS r(user_id text, scope_id uuid, scope text, device text, podcast text, episode text, settings jsonb)
        ON CONFLICT (user_id, scope_id) DO UPDATE SET settings = EXCLUDED.settings`,
  };
};

/** Episode actions are only ever added: an upload's rows are keyed by its sequence and their order. */
function episodeActionsWrite(s: string, uploads: readonly EpisodeActionsRecorded[]): Write | undefined {
  const actions = uploads.flatMap((upload) =>
    upload.actions.map((action, ordinal) => ({ action, upload, ordinal })),
  );
  if (actions.length === 0) return undefined;
  const column = <T>(pick: (row: (typeof actions)[number]) => T) => actions.map(pick);
  return {
    name: 'episode_actions_written',
    text: (p) => `
        INSERT INTO ${s}.episode_actions (user_id, sequence, ordinal, received_at, podcast, episode, action,
                                          "timestamp", device, guid, started, position, total)
        SELECT * FROM unnest(${p(texts(column((a) => a.upload.userId)))}, ${p(bigints(column((a) => a.upload.sequence)))},
                             ${p(ints(column((a) => a.ordinal)))}, ${p(bigints(column((a) => a.upload.receivedAt)))},
                             ${p(texts(column((a) => a.action.podcast)))}, ${p(texts(column((a) => a.action.episode)))},
                             ${p(texts(column((a) => a.action.action)))}, ${p(texts(column((a) => a.action.timestamp)))},
                             ${p(texts(column((a) => a.action.device ?? null)))}, ${p(texts(column((a) => a.action.guid ?? null)))},
                             ${p(ints(column((a) => a.action.started ?? null)))}, ${p(ints(column((a) => a.action.position ?? null)))},
                             ${p(ints(column((a) => a.action.total ?? null)))})
        ON CONFLICT (user_id, sequence, ordinal) DO NOTHING`,
  };
}

/** A batch's changes as one set-based write per change kind, each kind to its own table (two for
 * subscriptions: those the batch creates, inserted, and the others, upserted). Rows are
 * whole, so only the last row of each key in the batch is written, as `evolve` keeps the last.
 * A new subscription's first guid (its id) and the feed_url it is created with go on its own row
 * (`created`, `created_feed_url`); the tables behind the views `subscription_guids` and
 * `subscription_feed_urls` get only what a subscription takes later. */
export function changeWrites(schema: string, changes: readonly Change[]): Write[] {
  const s = quoteIdent(schema);
  const rows = batchRows(changes);
  const writes = subscriptionWrites(s, rows.subscriptions, rows.createdWith);
  const guids = [...rows.guids.values()];
  if (guids.length > 0) writes.push(laterGuidsWrite(s, guids));
  const urls = [...rows.feedUrls.values()];
  if (urls.length > 0) writes.push(laterFeedUrlsWrite(s, urls));
  const dels = [...rows.deletions.values()];
  if (dels.length > 0) writes.push(deletionsWrite(s, dels));
  if (rows.clocks.size > 0) writes.push(clocksWrite(s, rows.clocks));
  const devs = [...rows.devices.values()];
  if (devs.length > 0) writes.push(devicesWrite(s, devs));
  const actions = episodeActionsWrite(s, rows.actionUploads);
  if (actions) writes.push(actions);
  const seen = [...rows.seenActions.values()];
  if (seen.length > 0) writes.push(seenActionsWrite(s, seen));
  const settings = [...rows.settings.values()];
  if (settings.length > 0) writes.push(settingsWrite(s, settings));
  return writes;
}

/** Writes a batch's changes in one statement. */
export async function writeChanges(sql: Sql, schema: string, changes: readonly Change[]): Promise<void> {
  const writes = changeWrites(schema, changes);
  if (writes.length > 0) await runWrites(sql, writes);
}

/** The outcomes as one JSON document, not as a column array each: an outcome is JSON itself, and
 * as an element of a `jsonb[]` every quote in it would be escaped by the client and unescaped by
 * the server. Read as `jsonb`, the document is parsed once and each outcome taken from it as it is;
 * read as `json`, each outcome's text would be parsed again into its `jsonb` column. A position's
 * outcome is written once, by the transaction that moves the stored offset past it: a plain INSERT,
 * which fails rather than keep an outcome another event left at that position. */
export function outcomeWrites(schema: string, outcomes: readonly OutcomeRow[]): Write[] {
  if (outcomes.length === 0) return [];
  const rows = JSON.stringify(
    outcomes.map((o) => ({
      partition: o.partition,
      offset: o.offset,
      user_id: o.userId,
      event_id: o.eventId,
      request_id: o.requestId,
      event_type: o.eventType,
      instant: o.instant,
      outcome: o.outcome,
    })),
  );
  return [
    {
      name: 'outcomes_written',
      text: (p) => `
        INSERT INTO ${quoteIdent(schema)}.request_outcomes
          (partition, "offset", user_id, event_id, request_id, event_type, instant, outcome)
        SELECT * FROM jsonb_to_recordset(${p(rows)}::jsonb)
          AS r(partition int, "offset" bigint, user_id text, event_id uuid, request_id text, event_type text,
               instant bigint, outcome jsonb)`,
    },
  ];
}
