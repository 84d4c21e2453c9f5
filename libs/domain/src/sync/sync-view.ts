import { Guid, UserId } from '../events/log-event';
import { SyncEntity } from '../subscriptions/outcome';
import { latestGuid } from '../subscriptions/resolve';
import { Subscription } from '../subscriptions/subscription';
import { Instant, Micros, microsOf } from '../time';
import { syncIdOf } from './ids';

/** A subscription as the sync draft's face shows it. */
export const entityOf = (subscription: Subscription): SyncEntity => ({
  syncId: subscription.syncId,
  guid: latestGuid(subscription),
  feedUrl: subscription.feedUrl,
  subscribedAt: subscription.subscribedAt,
  unsubscribedAt: subscription.unsubscribedAt,
});

/** Whether the sync face sees a difference: any field of the entity, its last_updated or the
 * Client-ID it is filtered by. The last-write-wins times alone are not seen. */
export const visiblyChanged = (before: Subscription | undefined, after: Subscription): boolean =>
  before === undefined ||
  before.feedUrl !== after.feedUrl ||
  latestGuid(before) !== latestGuid(after) ||
  before.subscribedAt !== after.subscribedAt ||
  before.unsubscribedAt !== after.unsubscribedAt ||
  before.lastUpdated !== after.lastUpdated ||
  before.lastClientId !== after.lastClientId;

export interface NewSubscription {
  readonly userId: UserId;
  readonly id: Guid;
  readonly feedUrl: string;
  /** castlog's instant of the request. */
  readonly now: Instant;
  /** The action's `occurred_at` on the sync face; castlog's instant on the others. */
  readonly at: Micros;
  readonly clientId: string | null;
}

/** A subscription created subscribed, by any face. */
export const newSubscription = ({
  userId,
  id,
  feedUrl,
  now,
  at,
  clientId,
}: NewSubscription): Subscription => ({
  userId,
  id,
  guids: [{ guid: id, since: now }],
  guid: id,
  feedUrl,
  isSubscribed: true,
  subscriptionChanged: now,
  guidChanged: null,
  deleted: null,
  mergedInto: null,
  deletionId: null,
  syncId: syncIdOf(userId, id),
  subscribedAt: at,
  unsubscribedAt: null,
  stateTime: at,
  identityTime: at,
  lastUpdated: at,
  lastClientId: clientId,
  // Assigned by `finish`, as every change the sync face sees gets its cursor.
  syncCursor: 0,
});

/** Whether the sync face counts it subscribed: subscribed on `/v1`, and not merged into another. */
const subscribedThere = (subscription: Subscription): boolean =>
  subscription.isSubscribed && subscription.mergedInto === null;

/** The sync face's fields after a change made through `/v1` or gpodder.net, which writes the part
 * it changes at castlog's instant `now`: a state that changes (subscribed, unsubscribed, deleted,
 * merged) is the state part's, a feed_url or latest guid that changes the identity part's; either
 * makes `now` the last_updated, with no Client-ID. */
export const seenFromOtherFace = (
  before: Subscription | undefined,
  after: Subscription,
  now: Instant,
): Subscription => {
  if (before === undefined) return after;
  const at = microsOf(now);
  const wasSubscribed = before.unsubscribedAt === null;
  const isSubscribed = subscribedThere(after);
  const state: Partial<Subscription> =
    wasSubscribed === isSubscribed
      ? {}
      : isSubscribed
        ? { subscribedAt: at, unsubscribedAt: null, stateTime: at }
        : { unsubscribedAt: at, stateTime: at };
  const identity: Partial<Subscription> =
    before.feedUrl !== after.feedUrl || latestGuid(before) !== latestGuid(after) ? { identityTime: at } : {};
  if (Object.keys(state).length === 0 && Object.keys(identity).length === 0) return after;
  return { ...after, ...state, ...identity, lastUpdated: at, lastClientId: null };
};
