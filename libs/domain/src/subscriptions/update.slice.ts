import { SubscriptionUpdateRequested } from '../events/log-event';
import { Instant } from '../time';
import { Change } from './change';
import { claimFeedUrl, DecisionOf, finish, guidRecorded, saved } from './decision';
import { Draft } from './evolve';
import { normalizeFeedUrl, normalizeGuid } from './feed-url';
import { UpdatedFields } from './outcome';
import { followMerges, latestGuid, resolveSubscription } from './resolve';
import { Subscription, UserSubscriptions } from './subscription';

// PATCH /v1/subscriptions/{guid}: SubscriptionUpdateRequested.

type UpdateDecision = DecisionOf<SubscriptionUpdateRequested>;

const NOT_FOUND: UpdateDecision = { outcome: { kind: 'NotFound' }, changes: [] };
const GONE: UpdateDecision = { outcome: { kind: 'Gone' }, changes: [] };

export const decideUpdate = (
  state: UserSubscriptions,
  event: SubscriptionUpdateRequested,
  now: Instant,
): UpdateDecision => {
  const subscription = resolveSubscription(state, event.guid);
  if (subscription === undefined) return NOT_FOUND;
  // Only a finalized deletion sets `deleted`: a PATCH while the deletion is pending still applies.
  if (subscription.deleted !== null) return GONE;

  const changes: Change[] = [];
  const draft = new Draft(state);
  const apply = (more: readonly Change[]): void => {
    changes.push(...more);
    draft.apply(more);
  };
  let guidFields: Pick<UpdatedFields, 'newGuid' | 'guidChanged'> = {};

  if (event.newGuid !== undefined) {
    const newGuid = normalizeGuid(event.newGuid);
    const holder = resolveSubscription(state, newGuid);
    if (holder === undefined) {
      // A guid new to this user is appended to the chain and becomes the latest guid.
      const appended: Subscription = {
        ...subscription,
        guids: [...subscription.guids, { guid: newGuid, since: now }],
        guid: newGuid,
        guidChanged: now,
      };
      apply([saved(appended), guidRecorded(appended, newGuid)]);
      guidFields = { newGuid, guidChanged: now };
    } else if (holder.id !== subscription.id) {
      // Decision: merging into a subscription whose deletion has succeeded would make this one
      // vanish; the PATCH answers 410 as a PATCH on that subscription would, and changes nothing.
      if (holder.deleted !== null) return GONE;
      // Another subscription already has the guid: this one is merged into it and resolves to it
      // everywhere from now on; the answer's new_guid is that subscription's latest guid.
      // Decision: a deletion pending on this one is detached, as a reinstating POST detaches it:
      // the user's later intent wins, and what the merged guid resolves to (the holder) is not
      // deleted by a DELETE that named another subscription.
      apply([saved({ ...subscription, mergedInto: holder.id, guidChanged: now, deletionId: null })]);
      guidFields = { newGuid: latestGuid(holder), guidChanged: now };
    }
    // Decision: a new_guid this subscription already resolves from is no guid change.
  }

  let fields: UpdatedFields = guidFields;
  if (event.newFeedUrl !== undefined || event.isSubscribed !== undefined) {
    // new_feed_url and is_subscribed apply to what the path guid resolves to now (after a merge:
    // the target), and count as changed whenever given, with subscription_changed now.
    const current = draft.state;
    const target = followMerges(current, subscription.id);
    const normalized = event.newFeedUrl !== undefined ? normalizeFeedUrl(event.newFeedUrl) : undefined;
    const updated: Subscription = {
      ...target,
      feedUrl: event.newFeedUrl ?? target.feedUrl,
      isSubscribed: event.isSubscribed ?? target.isSubscribed,
      subscriptionChanged: now,
    };
    // The new feed_url's normalised form now maps to the target (the latest holder wins).
    apply([saved(updated), ...(normalized !== undefined ? claimFeedUrl(current, updated, normalized) : [])]);
    fields = {
      ...(event.newFeedUrl !== undefined ? { newFeedUrl: event.newFeedUrl } : {}),
      ...(event.isSubscribed !== undefined ? { isSubscribed: event.isSubscribed } : {}),
      subscriptionChanged: now,
      ...guidFields,
    };
  }
  return { outcome: { kind: 'Updated', changed: fields }, changes: finish(state, changes, now) };
};
