import { AddItem, GpodderUploadRequested, Guid } from '../events/log-event';
import { Instant } from '../time';
import { decideItem } from '../subscriptions/add.slice';
import { Change } from '../subscriptions/change';
import { DecisionOf, finish, saved } from '../subscriptions/decision';
import { Draft } from '../subscriptions/evolve';
import { checkFeedUrl, normalizeFeedUrl } from '../subscriptions/feed-url';
import { requireSubscription, resolveFeedUrl } from '../subscriptions/resolve';
import { Subscription, UserSubscriptions } from '../subscriptions/subscription';
import { deviceUsed } from './device';

// POST /api/2/subscriptions/{user}/{device}.json and the simple API's PUT: GpodderUploadRequested.

/** The URL of `add` and `remove` that both name (after normalising), if any: such an upload is
 * refused whole, before it reaches the log. */
export const conflictingUrl = (add: readonly unknown[], remove: readonly unknown[]): string | undefined => {
  const formOf = (url: unknown): string => {
    const checked = checkFeedUrl(url);
    return checked.ok ? checked.normalized : checked.feedUrl;
  };
  const added = new Set(add.map(formOf));
  const both = remove.find((url) => added.has(formOf(url)));
  return both === undefined ? undefined : checkFeedUrl(both).feedUrl;
};

/** The subscription an added URL (without a guid) names when the user holds it subscribed under
 * that URL (in any spelling), with no deletion attached: adding it again has nothing to do. */
const heldSubscribed = (state: UserSubscriptions, item: AddItem): Subscription | undefined => {
  if (item.guid !== undefined && item.guid !== null) return undefined;
  const checked = checkFeedUrl(item.feedUrl);
  if (!checked.ok) return undefined;
  const match = resolveFeedUrl(state, checked.normalized);
  const held =
    match !== undefined &&
    match.isSubscribed &&
    match.deleted === null &&
    match.deletionId === null &&
    normalizeFeedUrl(match.feedUrl) === checked.normalized;
  return held ? match : undefined;
};

/** Subscriptions in the order of their ids: changes in the same order whatever order the state was
 * loaded in. */
const byId = (a: Subscription, b: Subscription): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The live subscriptions (neither merged nor deleted) under their current normalised feed_url:
 * two of them can share one URL (a POST item matched by guid, a PATCH new_feed_url). */
const subscriptionsByCurrentUrl = (state: UserSubscriptions): Map<string, Subscription[]> => {
  const byUrl = new Map<string, Subscription[]>();
  for (const subscription of state.subscriptions.values()) {
    if (subscription.mergedInto !== null || subscription.deleted !== null) continue;
    const url = normalizeFeedUrl(subscription.feedUrl);
    const holders = byUrl.get(url);
    if (holders === undefined) byUrl.set(url, [subscription]);
    else holders.push(subscription);
  }
  return byUrl;
};

/** Every live subscription a removed URL reaches: the one that last took it (through merges,
 * so an older URL still reaches its feed) and every other one that holds it now. */
const reachedBy = (
  state: UserSubscriptions,
  normalized: string,
  byCurrentUrl: ReadonlyMap<string, readonly Subscription[]>,
): Subscription[] => {
  const reached = new Map<Guid, Subscription>();
  const latest = resolveFeedUrl(state, normalized);
  if (latest !== undefined && latest.deleted === null) reached.set(latest.id, latest);
  for (const holder of byCurrentUrl.get(normalized) ?? []) reached.set(holder.id, holder);
  return [...reached.values()].sort(byId);
};

const unsubscribed = (subscription: Subscription, now: Instant): Change =>
  saved({ ...subscription, isSubscribed: false, subscriptionChanged: now });

export const decideUpload = (
  state: UserSubscriptions,
  event: GpodderUploadRequested,
  now: Instant,
): DecisionOf<GpodderUploadRequested> => {
  const changes: Change[] = [];
  const draft = new Draft(state);
  const apply = (more: readonly Change[]): void => {
    changes.push(...more);
    draft.apply(more);
  };
  apply(deviceUsed(state, event.deviceId));

  // Each added URL is a POST item: matched, reinstated or created, with the OPA rules. Decision:
  // a URL of a feed the user holds subscribed already changes nothing. gpodder.net clients upload
  // their whole set again (a simple-API PUT always does), and a change there would show every feed
  // to every device again.
  const updateUrls = new Map<string, string>();
  const landed: [sent: string, subscriptionId: Guid][] = [];
  for (const item of event.add) {
    const held = heldSubscribed(draft.state, item);
    if (held !== undefined) {
      landed.push([checkFeedUrl(item.feedUrl).feedUrl, held.id]);
      continue;
    }
    const decided = decideItem(draft.state, item, now);
    if (decided.kind === 'failed') {
      updateUrls.set(decided.item.feedUrl, '');
      continue;
    }
    apply(decided.changes);
    landed.push([checkFeedUrl(item.feedUrl).feedUrl, decided.subscriptionId]);
  }
  const kept = new Set(landed.map(([, id]) => id));

  // A removed URL unsubscribes every subscription it reaches; a URL nothing holds changes nothing.
  // Built only when there is something to remove: a replacing upload loads the whole user.
  const byCurrentUrl =
    event.remove.length > 0 ? subscriptionsByCurrentUrl(draft.state) : new Map<string, Subscription[]>();
  for (const url of event.remove) {
    const checked = checkFeedUrl(url);
    if (!checked.ok) {
      updateUrls.set(checked.feedUrl, '');
      continue;
    }
    for (const match of reachedBy(draft.state, checked.normalized, byCurrentUrl)) {
      // Decision: an older URL of a feed this upload adds does not take it away again; only the
      // same URL in both lists is refused (conflictingUrl), and an alias is read as the add's.
      if (kept.has(match.id)) continue;
      if (match.feedUrl !== checked.feedUrl) updateUrls.set(checked.feedUrl, match.feedUrl);
      const current = requireSubscription(draft.state, match.id);
      if (current.isSubscribed) apply([unsubscribed(current, now)]);
    }
  }

  // A replacing upload unsubscribes every subscription no added URL reached, in the order of their
  // ids: the changes are the same whatever order the state was loaded in.
  if (event.replace === true) {
    const all = [...draft.state.subscriptions.values()].sort(byId);
    for (const subscription of all) {
      if (kept.has(subscription.id) || !subscription.isSubscribed) continue;
      if (subscription.mergedInto !== null || subscription.deleted !== null) continue;
      apply([unsubscribed(subscription, now)]);
    }
  }

  // A URL stored in another spelling is reported with the spelling the client should use.
  const current = draft.state;
  for (const [sent, id] of landed) {
    const stored = requireSubscription(current, id).feedUrl;
    if (stored !== sent) updateUrls.set(sent, stored);
  }
  const finished = finish(state, changes, now);
  return {
    outcome: {
      kind: 'Uploaded',
      updateUrls: [...updateUrls],
      clock: finished.length > 0 ? now : state.lastInstant,
    },
    changes: finished,
  };
};
