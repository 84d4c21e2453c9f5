import { Instant } from '../time';

/** A guid as stored: a lower-case UUID. */
export type Guid = string;
export type UserId = string;

/** One item of a POST as the client sent it. `feedUrl` and `guid` are kept raw: the decider
 * validates them, so the failure messages are part of the log's deterministic outcome (`feedUrl`
 * is absent from the log when the client sent none). `candidateGuid` is drawn by the API and used
 * only when the item matches nothing. */
export interface AddItem {
  readonly feedUrl?: unknown;
  readonly guid?: unknown;
  readonly candidateGuid: Guid;
}

export interface SubscriptionsAddRequested {
  readonly type: 'SubscriptionsAddRequested';
  readonly userId: UserId;
  readonly items: readonly AddItem[];
}

/** A PATCH whose fields the API has already checked for type (UUID, boolean, http(s) URL). */
export interface SubscriptionUpdateRequested {
  readonly type: 'SubscriptionUpdateRequested';
  readonly userId: UserId;
  readonly guid: Guid;
  readonly newFeedUrl?: string;
  readonly newGuid?: Guid;
  readonly isSubscribed?: boolean;
}

export interface DeletionRequested {
  readonly type: 'DeletionRequested';
  readonly userId: UserId;
  readonly guid: Guid;
}

/** Appended by the deletion saga after its transaction committed at `deletedAt`. */
export interface DeletionCompleted {
  readonly type: 'DeletionCompleted';
  readonly userId: UserId;
  readonly deletionId: number;
  readonly deletedAt: Instant;
}

/** Appended by the deletion saga after its transaction rolled back. */
export interface DeletionFailed {
  readonly type: 'DeletionFailed';
  readonly userId: UserId;
  readonly deletionId: number;
  readonly reason: string;
}

/** A device id of the gpodder.net face: `[A-Za-z0-9._-]{1,64}`, checked by the API. */
export type DeviceId = string;

export const DEVICE_TYPES = ['desktop', 'laptop', 'mobile', 'server', 'other'] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];

/** `POST /api/2/devices/{user}/{device}.json`, or the first use of a device on a read route: a
 * device is created with the fields given (type `other` and caption `""` when absent), an existing
 * one keeps every field not given. */
export interface DeviceUpdateRequested {
  readonly type: 'DeviceUpdateRequested';
  readonly userId: UserId;
  readonly deviceId: DeviceId;
  readonly caption?: string;
  readonly deviceType?: DeviceType;
}

/** A gpodder.net subscription upload (`POST /api/2/subscriptions/{user}/{device}.json`). Each added
 * URL is judged as an OPA POST item (`candidateGuid` drawn by the API); each removed URL that
 * reaches a subscription unsubscribes it. With `replace` (a simple-API PUT), every subscription
 * of the user that no added URL reaches is unsubscribed too. The API refuses a request naming one
 * URL in both lists (`conflictingUrl`), so the decider never sees one. */
export interface GpodderUploadRequested {
  readonly type: 'GpodderUploadRequested';
  readonly userId: UserId;
  readonly deviceId: DeviceId;
  readonly add: readonly AddItem[];
  readonly remove: readonly unknown[];
  readonly replace?: boolean;
}

/** gpodder.net's episode actions, `flattr` among them (gpodder.net lists it; castlog keeps it as uploaded). */
export const EPISODE_ACTION_KINDS = ['download', 'play', 'delete', 'new', 'flattr'] as const;
export type EpisodeActionKind = (typeof EPISODE_ACTION_KINDS)[number];

/** One gpodder.net episode action as the API checked it: `timestamp` in `YYYY-MM-DDTHH:MM:SS`
 * (UTC) when the client gave one, `device` a device id, the play fields whole seconds. */
export interface EpisodeAction {
  readonly podcast: string;
  readonly episode: string;
  readonly action: EpisodeActionKind;
  readonly timestamp?: string;
  readonly device?: DeviceId;
  readonly guid?: string;
  readonly started?: number;
  readonly position?: number;
  readonly total?: number;
}

/** `POST /api/2/episodes/{user}.json`: actions recorded as received, in order. */
export interface EpisodeActionsUploaded {
  readonly type: 'EpisodeActionsUploaded';
  readonly userId: UserId;
  readonly actions: readonly EpisodeAction[];
}

export const SETTINGS_SCOPES = ['account', 'device', 'podcast', 'episode'] as const;
export type SettingsScopeKind = (typeof SETTINGS_SCOPES)[number];

/** What gpodder.net settings are attached to: the account, a device, a podcast (its feed URL) or
 * an episode (its podcast's feed URL and its media URL). The URLs are kept as sent: they name the
 * scope, nothing is fetched or matched by them. */
export type SettingsScope =
  | { readonly kind: 'account' }
  | { readonly kind: 'device'; readonly deviceId: DeviceId }
  | { readonly kind: 'podcast'; readonly podcast: string }
  | { readonly kind: 'episode'; readonly podcast: string; readonly episode: string };

/** `POST /api/2/settings/{user}/{scope}.json`: keys to set (any JSON value each) and keys to
 * remove, in one scope. The API checks the request's own bounds (`settingsRequestRefusal`); the
 * decider also refuses a change that would leave the scope with too many keys. */
export interface SettingsUpdateRequested {
  readonly type: 'SettingsUpdateRequested';
  readonly userId: UserId;
  readonly scope: SettingsScope;
  readonly set: Readonly<Record<string, unknown>>;
  readonly remove: readonly string[];
}

/** A Client-ID of the sync draft's face: a UUID version 4, lower-case, checked by the API. */
export type ClientId = string;

export const SYNC_STATUSES = ['applied', 'ignored', 'rejected'] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];

/** `POST /api/v1/sync`: 1 to 30 actions from the client `clientId`, kept as sent (any JSON): the
 * decider judges each one alone, so a rejected action's reason is part of the log's deterministic
 * outcome. */
export interface SyncActionsPosted {
  readonly type: 'SyncActionsPosted';
  readonly userId: UserId;
  readonly clientId: ClientId;
  readonly actions: readonly unknown[];
}

export const FEED_MOVE_CAUSES = ['permanent-redirect', 'new-feed-url'] as const;
export type FeedMoveCause = (typeof FEED_MOVE_CAUSES)[number];

/** Appended by the feed resolver, one per user, when a feed moved for good: its URL answered a
 * permanent redirect chain ending in a feed, or the feed named an `<itunes:new-feed-url>`. `guids`
 * are the ids of the user's subscriptions that held `feedUrl` (normalised) when the resolver looked;
 * the decider moves those that still do to `newFeedUrl`, as a PATCH of `new_feed_url` would. */
export interface FeedMoved {
  readonly type: 'FeedMoved';
  readonly userId: UserId;
  readonly feedUrl: string;
  readonly newFeedUrl: string;
  readonly cause: FeedMoveCause;
  readonly guids: readonly Guid[];
}

export type LogEvent =
  | SubscriptionsAddRequested
  | SubscriptionUpdateRequested
  | DeletionRequested
  | DeletionCompleted
  | DeletionFailed
  | DeviceUpdateRequested
  | GpodderUploadRequested
  | EpisodeActionsUploaded
  | SyncActionsPosted
  | FeedMoved
  | SettingsUpdateRequested;

export type LogEventType = LogEvent['type'];

export const LOG_EVENT_TYPES: readonly LogEventType[] = [
  'SubscriptionsAddRequested',
  'SubscriptionUpdateRequested',
  'DeletionRequested',
  'DeletionCompleted',
  'DeletionFailed',
  'DeviceUpdateRequested',
  'GpodderUploadRequested',
  'EpisodeActionsUploaded',
  'SyncActionsPosted',
  'FeedMoved',
  'SettingsUpdateRequested',
];

/** The schema version every event is written with. */
export const LOG_EVENT_VERSION = 1;

/** An event as read back from the log. `sequence` is unique across the log and derived from the
 * record's position only (offset × partitions + partition), so ids derived from it replay equal. */
export interface LoggedEvent<E extends LogEvent = LogEvent> {
  readonly event: E;
  readonly sequence: number;
}
