import { Guid } from '../events/log-event';
import { normalizeGuid } from './feed-url';
import { invariant } from './invariant';
import { Deletion, Subscription, UserSubscriptions } from './subscription';

/** The guid the subscription answers to now (`Subscription.guid`). */
export const latestGuid = (subscription: Subscription): Guid => subscription.guid;

export const requireSubscription = (state: UserSubscriptions, id: Guid): Subscription => {
  const subscription = state.subscriptions.get(id);
  invariant(subscription !== undefined, () => `subscription ${id} of user ${state.userId} is not loaded`);
  return subscription;
};

export const requireDeletion = (state: UserSubscriptions, deletionId: number): Deletion => {
  const deletion = state.deletions.get(deletionId);
  invariant(deletion !== undefined, () => `deletion ${deletionId} of user ${state.userId} is not loaded`);
  return deletion;
};

/** Follows `mergedInto` from the subscription `id` to the one it finally resolves to. */
export const followMerges = (state: UserSubscriptions, id: Guid): Subscription => {
  const seen = new Set<Guid>();
  let current = requireSubscription(state, id);
  while (current.mergedInto !== null) {
    invariant(!seen.has(current.id), () => `mergedInto cycle through ${current.id}`);
    seen.add(current.id);
    current = requireSubscription(state, current.mergedInto);
  }
  return current;
};

/** The subscription any guid it (or a subscription merged into it) has had resolves to: byGuid,
 * then the mergedInto chain. `undefined` when the user has no such guid. */
export const resolveSubscription = (state: UserSubscriptions, guid: Guid): Subscription | undefined => {
  const id = state.byGuid.get(normalizeGuid(guid));
  return id === undefined ? undefined : followMerges(state, id);
};

/** The subscription that most recently took this normalised feed_url, resolved through merges. */
export const resolveFeedUrl = (state: UserSubscriptions, normalized: string): Subscription | undefined => {
  const id = state.byFeedUrl.get(normalized);
  return id === undefined ? undefined : followMerges(state, id);
};
