import { FeedMoved } from '../events/log-event';
import { Instant } from '../time';
import { Change } from './change';
import { claimFeedUrl, DecisionOf, finish, saved } from './decision';
import { Draft } from './evolve';
import { checkFeedUrl, normalizeFeedUrl } from './feed-url';
import { latestGuid, resolveSubscription } from './resolve';
import { Subscription, UserSubscriptions } from './subscription';

// A feed that moved for good (the feed resolver's FeedMoved): each named subscription still on the
// old feed takes the new feed_url, as a PATCH of new_feed_url would.

type MoveDecision = DecisionOf<FeedMoved>;

/** Whether `subscription` is one a move of `feedUrl` (normalised) applies to: live, not merged into
 * another, and still on that feed. A repeated move, or one the user overtook with a PATCH or an
 * upload, finds none. */
const stillOn = (subscription: Subscription | undefined, feedUrl: string): subscription is Subscription =>
  subscription !== undefined &&
  subscription.deleted === null &&
  subscription.mergedInto === null &&
  normalizeFeedUrl(subscription.feedUrl) === feedUrl;

export const decideFeedMoved = (state: UserSubscriptions, event: FeedMoved, now: Instant): MoveDecision => {
  const target = checkFeedUrl(event.newFeedUrl);
  // The new URL comes from a publisher's feed or redirect: the /v1 rules judge it like a client's.
  if (!target.ok) return { outcome: { kind: 'Moved', moved: [], refused: target.message }, changes: [] };
  if (target.normalized === event.feedUrl) return { outcome: { kind: 'Moved', moved: [] }, changes: [] };
  const draft = new Draft(state);
  const changes: Change[] = [];
  const moved: string[] = [];
  for (const guid of event.guids) {
    const subscription = resolveSubscription(draft.state, guid);
    if (!stillOn(subscription, event.feedUrl)) continue;
    const updated: Subscription = { ...subscription, feedUrl: target.feedUrl, subscriptionChanged: now };
    const more = [saved(updated), ...claimFeedUrl(draft.state, updated, target.normalized)];
    changes.push(...more);
    draft.apply(more);
    moved.push(latestGuid(updated));
  }
  return { outcome: { kind: 'Moved', moved }, changes: finish(state, changes, now) };
};
