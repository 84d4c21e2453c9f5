import {
  AddItem,
  ClientId,
  SyncActionsPosted,
  DeletionCompleted,
  DeletionFailed,
  DeletionRequested,
  DeviceId,
  DeviceType,
  DeviceUpdateRequested,
  EpisodeAction,
  EpisodeActionsUploaded,
  FeedMoveCause,
  FeedMoved,
  GpodderUploadRequested,
  Guid,
  LogEvent,
  SettingsScope,
  SettingsUpdateRequested,
  SubscriptionsAddRequested,
  SubscriptionUpdateRequested,
  UserId,
} from '../events/log-event';
import { AddedItem, FailedItem, RequestOutcome, SyncResult, UpdatedFields } from '../subscriptions/outcome';
import { normalizeFeedUrl } from '../subscriptions/feed-url';
import { resolveSubscription } from '../subscriptions/resolve';
import { Device, Subscription, UserSubscriptions } from '../subscriptions/subscription';
import { Instant } from '../time';

export const USER: UserId = 'user-alice';
export const OTHER_USER: UserId = 'user-bob';

/** Lower-case UUIDs (v4 layout), as stored. */
export const G1: Guid = '11111111-1111-4111-8111-111111111111';
export const G2: Guid = '22222222-2222-4222-8222-222222222222';
export const G3: Guid = '33333333-3333-4333-8333-333333333333';
export const G4: Guid = '44444444-4444-4444-8444-444444444444';
export const G5: Guid = '55555555-5555-4555-8555-555555555555';
export const G6: Guid = '66666666-6666-4666-8666-666666666666';

/** Instants one minute apart from 2023-02-23T14:00:00.000Z. */
export const T0: Instant = Date.UTC(2023, 1, 23, 14, 0, 0);
export const T1: Instant = T0 + 60_000;
export const T2: Instant = T0 + 2 * 60_000;
export const T3: Instant = T0 + 3 * 60_000;
export const T4: Instant = T0 + 4 * 60_000;
export const T5: Instant = T0 + 5 * 60_000;
export const T6: Instant = T0 + 6 * 60_000;
export const T7: Instant = T0 + 7 * 60_000;
export const T8: Instant = T0 + 8 * 60_000;

/** A log event with the time its record was appended at. `sequence` (the deletion id a
 * DeletionRequested yields) defaults to the event's 1-based position in the spec. */
export interface TimedEvent {
  readonly recordTime: Instant;
  readonly event: LogEvent;
  readonly sequence?: number;
}

export const at = (recordTime: Instant, event: LogEvent, sequence?: number): TimedEvent =>
  sequence === undefined ? { recordTime, event } : { recordTime, event, sequence };

/** The guid the API would have drawn for an item without one: a fixed function of the feed_url, so
 * a spec can name it (`candidateFor('https://a.example/rss')`). */
export const candidateFor = (feedUrl: unknown): Guid => {
  const text = JSON.stringify(feedUrl) ?? 'undefined';
  let hash = 0xcbf29ce4;
  let hash2 = 0x84222325;
  for (let i = 0; i < text.length; i++) {
    hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
    hash2 = Math.imul(hash2 ^ text.charCodeAt(i), 0x5bd1e995) >>> 0;
  }
  const a = hash.toString(16).padStart(8, '0');
  const b = hash2.toString(16).padStart(8, '0');
  return `cccccccc-${a.slice(0, 4)}-4${a.slice(4, 7)}-8${b.slice(0, 3)}-${b.slice(3, 8)}${a.slice(0, 7)}`;
};

/** One POST item as the client sent it (snake case, any JSON); `candidate` overrides the drawn guid. */
export interface ItemInput {
  readonly feed_url?: unknown;
  readonly guid?: unknown;
  readonly candidate?: Guid;
}

const toAddItem = (input: ItemInput): AddItem => ({
  feedUrl: input.feed_url,
  ...('guid' in input ? { guid: input.guid } : {}),
  candidateGuid: input.candidate ?? candidateFor(input.feed_url),
});

export function addRequested(items: readonly ItemInput[]): SubscriptionsAddRequested;
export function addRequested(userId: UserId, items: readonly ItemInput[]): SubscriptionsAddRequested;
export function addRequested(
  userIdOrItems: UserId | readonly ItemInput[],
  maybeItems?: readonly ItemInput[],
): SubscriptionsAddRequested {
  const [userId, items] =
    typeof userIdOrItems === 'string' ? [userIdOrItems, maybeItems ?? []] : [USER, userIdOrItems];
  return { type: 'SubscriptionsAddRequested', userId, items: items.map(toAddItem) };
}

export interface UpdateInput {
  readonly new_feed_url?: string;
  readonly new_guid?: Guid;
  readonly is_subscribed?: boolean;
}

export const updateRequested = (
  guid: Guid,
  body: UpdateInput,
  userId: UserId = USER,
): SubscriptionUpdateRequested => ({
  type: 'SubscriptionUpdateRequested',
  userId,
  guid,
  ...(body.new_feed_url !== undefined ? { newFeedUrl: body.new_feed_url } : {}),
  ...(body.new_guid !== undefined ? { newGuid: body.new_guid } : {}),
  ...(body.is_subscribed !== undefined ? { isSubscribed: body.is_subscribed } : {}),
});

export const deletionRequested = (guid: Guid, userId: UserId = USER): DeletionRequested => ({
  type: 'DeletionRequested',
  userId,
  guid,
});

export const deletionCompleted = (
  deletionId: number,
  deletedAt: Instant,
  userId: UserId = USER,
): DeletionCompleted => ({
  type: 'DeletionCompleted',
  userId,
  deletionId,
  deletedAt,
});

export const deletionFailed = (
  deletionId: number,
  reason = 'rolled back',
  userId: UserId = USER,
): DeletionFailed => ({
  type: 'DeletionFailed',
  userId,
  deletionId,
  reason,
});

/** The feed resolver's move of `feedUrl` (normalised here) to `newFeedUrl`, naming `guids`. */
export const feedMoved = (
  feedUrl: string,
  newFeedUrl: string,
  guids: readonly Guid[],
  cause: FeedMoveCause = 'permanent-redirect',
  userId: UserId = USER,
): FeedMoved => ({ type: 'FeedMoved', userId, feedUrl: normalizeFeedUrl(feedUrl), newFeedUrl, cause, guids });

/** A feed move's outcome: the latest guids moved, or why the new URL was refused. */
export const moved = (guids: readonly Guid[], refused?: string): RequestOutcome => ({
  kind: 'Moved',
  moved: guids,
  ...(refused !== undefined ? { refused } : {}),
});

// gpodder.net requests.

/** `POST /api/2/devices/{user}/{device}.json` with the fields given (`type` as the JSON names it). */
export const deviceUpdated = (
  deviceId: DeviceId,
  body: { readonly caption?: string; readonly type?: DeviceType } = {},
  userId: UserId = USER,
): DeviceUpdateRequested => ({
  type: 'DeviceUpdateRequested',
  userId,
  deviceId,
  ...(body.caption !== undefined ? { caption: body.caption } : {}),
  ...(body.type !== undefined ? { deviceType: body.type } : {}),
});

export interface UploadInput {
  /** URLs as the client sent them (any JSON); each gets the guid the API would draw for it. */
  readonly add?: readonly unknown[];
  readonly remove?: readonly unknown[];
  /** A simple-API PUT: the added URLs are the whole subscribed set. */
  readonly replace?: boolean;
}

/** A subscription upload from `deviceId`: `POST /api/2/subscriptions/{user}/{device}.json`, or with
 * `replace` a simple-API PUT. */
export const uploadRequested = (
  deviceId: DeviceId,
  body: UploadInput,
  userId: UserId = USER,
): GpodderUploadRequested => ({
  type: 'GpodderUploadRequested',
  userId,
  deviceId,
  add: (body.add ?? []).map((feedUrl) => ({ feedUrl, candidateGuid: candidateFor(feedUrl) })),
  remove: body.remove ?? [],
  ...(body.replace !== undefined ? { replace: body.replace } : {}),
});

/** `POST /api/2/episodes/{user}.json`. */
export const episodeActionsUploaded = (
  actions: readonly EpisodeAction[],
  userId: UserId = USER,
): EpisodeActionsUploaded => ({ type: 'EpisodeActionsUploaded', userId, actions });

/** One episode action: a `play` of `episode` of `podcast` unless `fields` say otherwise. */
export const episodeAction = (
  podcast: string,
  episode: string,
  fields: Partial<EpisodeAction> = {},
): EpisodeAction => ({ podcast, episode, action: 'play', ...fields });

/** `POST /api/2/settings/{user}/{scope}.json`: `set` and `remove` as the body names them. */
export const settingsUpdated = (
  scope: SettingsScope,
  body: { readonly set?: Readonly<Record<string, unknown>>; readonly remove?: readonly string[] },
  userId: UserId = USER,
): SettingsUpdateRequested => ({
  type: 'SettingsUpdateRequested',
  userId,
  scope,
  set: body.set ?? {},
  remove: body.remove ?? [],
});

export const ACCOUNT: SettingsScope = { kind: 'account' };

// Sync draft requests.

/** Client-IDs of three installations. */
export const CLIENT_A = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
export const CLIENT_B = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
export const CLIENT_C = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';

/** `POST /api/v1/sync` from `clientId` with these actions (any JSON, as sent). */
export const syncPosted = (
  actions: readonly unknown[],
  clientId: ClientId = CLIENT_A,
  userId: UserId = USER,
): SyncActionsPosted => ({ type: 'SyncActionsPosted', userId, clientId, actions });

let actionCounter = 0;
/** A fresh action_id (v4 layout), unique within the test run. */
export const newActionId = (): string =>
  `a0000000-0000-4000-8000-${(++actionCounter).toString(16).padStart(12, '0')}`;

/** One sync action as a client sends it, `occurred_at` as an RFC 3339 text. */
export const syncAction = (
  action: string,
  occurredAt: string,
  data: unknown,
  actionId: string = newActionId(),
): Record<string, unknown> => ({
  type: 'subscription',
  action,
  action_id: actionId,
  occurred_at: occurredAt,
  data,
});

export const subscribeAction = (occurredAt: string, data: Record<string, unknown>, actionId?: string) =>
  syncAction('subscribe', occurredAt, data, actionId);
export const unsubscribeAction = (occurredAt: string, syncId: string, actionId?: string) =>
  syncAction('unsubscribe', occurredAt, { sync_id: syncId }, actionId);
export const updateAction = (occurredAt: string, data: Record<string, unknown>, actionId?: string) =>
  syncAction('update', occurredAt, data, actionId);

/** The outcome of a sync request. */
export const synced = (results: readonly SyncResult[]): RequestOutcome => ({ kind: 'Synced', results });

// Expected outcomes.

export const sub = (
  guid: Guid,
  feedUrl: string,
  subscriptionChanged: Instant,
  isSubscribed = true,
): AddedItem => ({
  feedUrl,
  guid,
  isSubscribed,
  subscriptionChanged,
});

export const failed = (feedUrl: string, message: string): FailedItem => ({ feedUrl, message });

export const added = (
  success: readonly AddedItem[],
  failure: readonly FailedItem[] = [],
): RequestOutcome => ({
  kind: 'Added',
  success,
  failure,
});

export const updated = (changed: UpdatedFields): RequestOutcome => ({ kind: 'Updated', changed });

export const deletionAccepted = (deletionId: number): RequestOutcome => ({
  kind: 'DeletionAccepted',
  deletionId,
});

/** A gpodder.net upload's answer: the URLs to rewrite (`[sent, stored]`, `[sent, ""]`) and the clock. */
export const uploaded = (
  updateUrls: readonly (readonly [string, string])[],
  clock: Instant,
): RequestOutcome => ({ kind: 'Uploaded', updateUrls, clock });

export const actionsRecorded = (clock: Instant): RequestOutcome => ({ kind: 'ActionsRecorded', clock });

export const DEVICE_UPDATED: RequestOutcome = { kind: 'DeviceUpdated' };

export const NOT_FOUND: RequestOutcome = { kind: 'NotFound' };
export const GONE: RequestOutcome = { kind: 'Gone' };
export const RECORDED: RequestOutcome = { kind: 'Recorded' };

// State.

/** The subscription a guid resolves to; fails the spec when there is none. */
export const resolved = (state: UserSubscriptions, guid: Guid): Subscription => {
  const subscription = resolveSubscription(state, guid);
  if (subscription === undefined) throw new Error(`${guid} resolves to nothing`);
  return subscription;
};

/** A device of `USER` as the state holds it. */
export const device = (
  id: DeviceId,
  lastUsed: Instant | null,
  caption = '',
  type: DeviceType = 'other',
  userId: UserId = USER,
): Device => ({
  userId,
  id,
  caption,
  type,
  lastUsed,
});
