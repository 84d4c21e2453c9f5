import { AddItem, Guid, SubscriptionsAddRequested } from '../events/log-event';
import { newSubscription } from '../sync/sync-view';
import { Instant, microsOf } from '../time';
import { Change } from './change';
import { claimFeedUrl, DecisionOf, finish, guidRecorded, saved } from './decision';
import { Draft } from './evolve';
import { checkFeedUrl, INVALID_GUID_MESSAGE, isGuid, normalizeFeedUrl, normalizeGuid } from './feed-url';
import { invariant } from './invariant';
import { AddedItem, FailedItem } from './outcome';
import { latestGuid, requireSubscription, resolveFeedUrl, resolveSubscription } from './resolve';
import { Subscription, UserSubscriptions } from './subscription';

// POST /v1/subscriptions: SubscriptionsAddRequested.

export type ItemDecision =
  | { readonly kind: 'failed'; readonly item: FailedItem }
  | { readonly kind: 'landed'; readonly subscriptionId: Guid; readonly changes: readonly Change[] };

const failed = (feedUrl: string, message: string): ItemDecision => ({
  kind: 'failed',
  item: { feedUrl, message },
});

/** One item against `state`: failed, or the changes that land it on a subscription (new, matched
 * or reinstated). Shared by the gpodder.net upload, whose added URLs are items too. */
export const decideItem = (state: UserSubscriptions, item: AddItem, now: Instant): ItemDecision => {
  // The feed_url is checked first: a failure reports its message and the feed_url as sent.
  const feedUrl = checkFeedUrl(item.feedUrl);
  if (!feedUrl.ok) return failed(feedUrl.feedUrl, feedUrl.message);

  // Decision: `"guid": null` counts as no guid, as a missing one does.
  let guid: Guid | undefined;
  if (item.guid !== undefined && item.guid !== null) {
    // A guid that is not a UUID fails the item, with the feed_url as sent.
    if (!isGuid(item.guid)) return failed(feedUrl.feedUrl, INVALID_GUID_MESSAGE);
    guid = normalizeGuid(item.guid);
  }
  const normalized = feedUrl.normalized;

  // The guid is authoritative: a subscription that has (or was merged from one that had) the
  // item's guid beats the one holding its feed_url, which is then left alone.
  const knownGuid = guid !== undefined && state.byGuid.has(guid);
  const match =
    (guid !== undefined ? resolveSubscription(state, guid) : undefined) ?? resolveFeedUrl(state, normalized);

  if (match === undefined) {
    // No match: a new subscription with the item's guid, else the guid the API drew for it.
    const id = guid ?? normalizeGuid(item.candidateGuid);
    invariant(!state.byGuid.has(id), () => `candidate guid ${id} is already taken`);
    invariant(!state.byFeedUrl.has(normalized), () => `feed_url ${normalized} is already taken`);
    const created = newSubscription({
      userId: state.userId,
      id,
      feedUrl: feedUrl.feedUrl,
      now,
      at: microsOf(now),
      clientId: null,
    });
    return {
      kind: 'landed',
      subscriptionId: id,
      changes: [saved(created), guidRecorded(created, id), ...claimFeedUrl(state, created, normalized, true)],
    };
  }

  // A guid the match does not have (unknown to this user) becomes its latest guid.
  const appendGuid = guid !== undefined && !knownGuid ? guid : undefined;
  // A feed_url that differs after normalising replaces the stored one; an equal one keeps the
  // stored spelling.
  const takesFeedUrl = normalizeFeedUrl(match.feedUrl) !== normalized;
  const reinstated: Subscription = {
    ...match,
    guids: appendGuid !== undefined ? [...match.guids, { guid: appendGuid, since: now }] : match.guids,
    guid: appendGuid ?? match.guid,
    guidChanged: appendGuid !== undefined ? now : match.guidChanged,
    feedUrl: takesFeedUrl ? feedUrl.feedUrl : match.feedUrl,
    // A match is (re)subscribed and reinstated: deleted cleared, and its deletion detached so a
    // later DELETE gets a new deletion id.
    isSubscribed: true,
    subscriptionChanged: now,
    deleted: null,
    deletionId: null,
  };
  return {
    kind: 'landed',
    subscriptionId: match.id,
    changes: [
      saved(reinstated),
      ...(appendGuid !== undefined ? [guidRecorded(reinstated, appendGuid)] : []),
      // Decision: the item's normalised feed_url now maps to the match, also when the stored one was
      // equal but another subscription had taken that URL since (the latest holder wins).
      ...claimFeedUrl(state, reinstated, normalized),
    ],
  };
};

const answer = (subscription: Subscription): AddedItem => ({
  feedUrl: subscription.feedUrl,
  guid: latestGuid(subscription),
  isSubscribed: subscription.isSubscribed,
  subscriptionChanged: subscription.subscriptionChanged,
});

export const decideAdd = (
  state: UserSubscriptions,
  event: SubscriptionsAddRequested,
  now: Instant,
): DecisionOf<SubscriptionsAddRequested> => {
  const failure: FailedItem[] = [];
  const landedOn: Guid[] = [];
  const changes: Change[] = [];
  const draft = new Draft(state);
  // Items in request order, each against the state the previous ones left: items that match each
  // other end as one subscription.
  for (const item of event.items) {
    const decided = decideItem(draft.state, item, now);
    if (decided.kind === 'failed') {
      failure.push(decided.item);
      continue;
    }
    landedOn.push(decided.subscriptionId);
    changes.push(...decided.changes);
    draft.apply(decided.changes);
  }
  const current = draft.state;
  // One success item per valid item, in request order, answered from the state after the whole
  // request (decision: also its feed_url), so items on one subscription answer the same.
  const success = landedOn.map((id) => answer(requireSubscription(current, id)));
  return { outcome: { kind: 'Added', success, failure }, changes: finish(state, changes, now) };
};
