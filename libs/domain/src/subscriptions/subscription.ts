import { DeviceId, DeviceType, Guid, UserId } from '../events/log-event';
import { Instant } from '../time';

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
}
