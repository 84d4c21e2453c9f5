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
 * that URL (in any spelling), with no deletion attached: adding it again has nothing to do. Any of
 * its holders counts, the last to take the URL first. */
const heldSubscribed = (
  state: UserSubscriptions,
  holders: Holders,
  item: AddItem,
): Subscription | undefined => {
  if (item.guid !== undefined && item.guid !== null) return undefined;
  const checked = checkFeedUrl(item.feedUrl);
  if (!checked.ok) return undefined;
  const held = holders.of(checked.normalized).filter((s) => s.isSubscribed && s.deletionId === null);
  const latest = resolveFeedUrl(state, checked.normalized);
  return held.find((s) => s.id === latest?.id) ?? held[0];
};

/** Subscriptions in the order of their ids: changes in the same order whatever order the state was
 * loaded in. */
const byId = (a: Subscription, b: Subscription): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The live subscriptions (neither merged nor deleted) by their current normalised feed_url, kept
 * as the upload's changes apply: two of them can share one URL (a POST item matched by guid, a
 * PATCH new_feed_url). Built from the whole user, which `keysOf` loads for an upload. */
class Holders {
  private readonly byUrl = new Map<string, Map<Guid, Subscription>>();
  private readonly urlOf = new Map<Guid, string>();

  constructor(state: UserSubscriptions) {
    for (const subscription of state.subscriptions.values()) this.save(subscription);
  }

  save(subscription: Subscription): void {
    const before = this.urlOf.get(subscription.id);
    if (before !== undefined) this.byUrl.get(before)?.delete(subscription.id);
    this.urlOf.delete(subscription.id);
    if (subscription.mergedInto !== null || subscription.deleted !== null) return;
    const url = normalizeFeedUrl(subscription.feedUrl);
    this.urlOf.set(subscription.id, url);
    const holders = this.byUrl.get(url);
    if (holders === undefined) this.byUrl.set(url, new Map([[subscription.id, subscription]]));
    else holders.set(subscription.id, subscription);
  }

  /** In the order of their ids. */
  of(normalized: string): Subscription[] {
    return [...(this.byUrl.get(normalized)?.values() ?? [])].sort(byId);
  }
}

/** Every live subscription a removed URL reaches: the one that last took it (through merges,
 * so an older URL still reaches its feed) and every other one that holds it now. */
const reachedBy = (state: UserSubscriptions, normalized: string, holders: Holders): Subscription[] => {
  const reached = new Map<Guid, Subscription>();
  const latest = resolveFeedUrl(state, normalized);
  if (latest !== undefined && latest.deleted === null) reached.set(latest.id, latest);
  for (const holder of holders.of(normalized)) reached.set(holder.id, holder);
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
  const holders = new Holders(state);
  const apply = (more: readonly Change[]): void => {
    changes.push(...more);
    draft.apply(more);
    for (const change of more) if (change.kind === 'SubscriptionSaved') holders.save(change.subscription);
  };
  apply(deviceUsed(state, event.deviceId));

  // Each added URL is a POST item: matched, reinstated or created, with the OPA rules. Decision:
  // a URL of a feed the user holds subscribed already changes nothing. gpodder.net clients upload
  // their whole set again (a simple-API PUT always does), and a change there would show every feed
  // to every device again.
  const updateUrls = new Map<string, string>();
  const landed: [sent: string, subscriptionId: Guid][] = [];
  for (const item of event.add) {
    const held = heldSubscribed(draft.state, holders, item);
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
  // What the upload adds stays: the subscriptions its URLs landed on and every other one holding
  // one of its URLs now.
  const kept = new Set(landed.map(([, id]) => id));
  for (const [sent] of landed) for (const holder of holders.of(normalizeFeedUrl(sent))) kept.add(holder.id);

  // A removed URL unsubscribes every subscription it reaches; a URL nothing holds changes nothing.
  for (const url of event.remove) {
    const checked = checkFeedUrl(url);
    if (!checked.ok) {
      updateUrls.set(checked.feedUrl, '');
      continue;
    }
    for (const match of reachedBy(draft.state, checked.normalized, holders)) {
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
