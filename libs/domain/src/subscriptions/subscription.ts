import { ClientId, DeviceId, DeviceType, Guid, SettingsScope, SyncStatus, UserId } from '../events/log-event';
import { SyncId } from '../sync/ids';
import { Instant, Micros } from '../time';

/** One entry of a subscription's guid chain: `guid` became its latest guid at `since`. */
export interface GuidEntry {
  readonly guid: Guid;
  readonly since: Instant;
}

/** A subscription as the read model holds it. `id` is its first guid and never changes. */
export interface Subscription {
  readonly userId: UserId;
  readonly id: Guid;
  /** The guid chain, oldest first; `guids[0].guid === id`. */
  readonly guids: readonly GuidEntry[];
  /** The guid it answers to on every face: the latest of its chain, or an earlier guid of its chain
   * that a sync update named again (the chain keeps each guid once, where it first came). */
  readonly guid: Guid;
  /** As last sent; the normalised feed_urls that reach it are `UserSubscriptions.byFeedUrl`. */
  readonly feedUrl: string;
  readonly isSubscribed: boolean;
  readonly subscriptionChanged: Instant;
  readonly guidChanged: Instant | null;
  readonly deleted: Instant | null;
  /** Set once a PATCH new_guid merged this subscription into another one (that one's id). */
  readonly mergedInto: Guid | null;
  /** The deletion now attached to it: pending, or succeeded while it stays deleted. */
  readonly deletionId: number | null;
  // The sync draft's face (CONTRACT, "The Open Podcast API sync draft"); its clocks are Micros.
  /** Never changes: `syncIdOf(userId, id)`. */
  readonly syncId: SyncId;
  readonly subscribedAt: Micros;
  /** Set while it is not subscribed there: unsubscribed, deleted, or merged into another. */
  readonly unsubscribedAt: Micros | null;
  /** Last-write-wins times of its two parts: the state (subscribed or not) and the identity
   * (feed_url and guid). A sync action counts only when it is strictly later than its part's. */
  readonly stateTime: Micros;
  readonly identityTime: Micros;
  /** The `occurred_at` of the change that last applied (castlog's time for the other faces), and
   * the Client-ID that made it (null for the other faces). */
  readonly lastUpdated: Micros;
  readonly lastClientId: ClientId | null;
  /** When castlog applied its latest change seen on the sync face: the user's sync clock, unique
   * and increasing per user, so the sync listing pages by it without skipping or repeating. */
  readonly syncCursor: Micros;
}

/** A sync action the user has sent, by its action_id, with its first result: a retry of it is
 * answered from here and never applied again. */
export interface SeenAction {
  readonly userId: UserId;
  readonly actionId: string;
  readonly status: SyncStatus;
  readonly reason: string | null;
  /** SHA-256 of the action's type, action and data: the same action_id with another action is
   * refused. */
  readonly fingerprint: string;
  /** The subscription it acted on, when it found or made one. */
  readonly subscriptionId: Guid | null;
}

export type DeletionStatus = 'PENDING' | 'SUCCESS' | 'FAILURE';

export interface Deletion {
  readonly userId: UserId;
  readonly deletionId: number;
  readonly subscriptionId: Guid;
  readonly status: DeletionStatus;
  readonly requestedAt: Instant;
  readonly finishedAt: Instant | null;
}

/** A device of the gpodder.net face. Every device of a user shares the user's one subscription set. */
export interface Device {
  readonly userId: UserId;
  readonly id: DeviceId;
  readonly caption: string;
  readonly type: DeviceType;
  /** The instant of the latest event that named the device (its creation or update, an upload
   * from it, an episode action or a setting naming it): every decision that names it sets it.
   * null only in a read model stored before last uses were recorded, for a device not named since. */
  readonly lastUsed: Instant | null;
}

/** The gpodder.net settings of one scope, by `scopeId` (`settingsScopeIdOf(scope)`): each key's
 * JSON value. */
export interface ScopeSettings {
  readonly userId: UserId;
  readonly scopeId: string;
  readonly scope: SettingsScope;
  readonly values: Readonly<Record<string, unknown>>;
}

/** The part of one user's state a decision needs. The projector loads every subscription that
 * an event in the batch can reach (by any guid, any normalised feed_url, or deletion id) plus the
 * subscriptions they are merged into; a spec may hold the whole state. */
export interface UserSubscriptions {
  readonly userId: UserId;
  readonly lastInstant: Instant;
  readonly subscriptions: ReadonlyMap<Guid, Subscription>;
  /** Any guid a subscription has had → that subscription's id. */
  readonly byGuid: ReadonlyMap<Guid, Guid>;
  /** Normalised feed_url → the id of the subscription that most recently took it. */
  readonly byFeedUrl: ReadonlyMap<string, Guid>;
  readonly deletions: ReadonlyMap<number, Deletion>;
  /** The devices the events name (gpodder.net). */
  readonly devices: ReadonlyMap<DeviceId, Device>;
  /** The last sync cursor assigned to one of the user's subscriptions (0 before any). */
  readonly syncClock: Micros;
  /** sync_id → subscription id. */
  readonly bySyncId: ReadonlyMap<SyncId, Guid>;
  /** The sync actions the events name that the user has sent before. */
  readonly seenActions: ReadonlyMap<string, SeenAction>;
  /** The settings scopes the events name that hold settings (gpodder.net), by scope id. */
  readonly settings: ReadonlyMap<string, ScopeSettings>;
}
