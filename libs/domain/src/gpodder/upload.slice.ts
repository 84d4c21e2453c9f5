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

/** One upload being decided: the changes so far, the state they make, who holds each URL, and
 * the URLs to report back to the client. */
class UploadRun {
  readonly changes: Change[] = [];
  readonly draft: Draft;
  readonly holders: Holders;
  readonly updateUrls = new Map<string, string>();
  /** Each added URL as sent, with the subscription it landed on. */
  readonly landed: [sent: string, subscriptionId: Guid][] = [];
  /** The subscriptions the upload adds: no removal or replacement in it takes them away. */
  readonly kept = new Set<Guid>();

  constructor(
    state: UserSubscriptions,
    readonly now: Instant,
  ) {
    this.draft = new Draft(state);
    this.holders = new Holders(state);
  }

  apply(more: readonly Change[]): void {
    this.changes.push(...more);
    this.draft.apply(more);
    for (const change of more)
      if (change.kind === 'SubscriptionSaved') this.holders.save(change.subscription);
  }

  unsubscribe(subscription: Subscription): void {
    this.apply([saved({ ...subscription, isSubscribed: false, subscriptionChanged: this.now })]);
  }
}

/** Each added URL is a POST item: matched, reinstated or created, with the OPA rules. Decision: a
 * URL of a feed the user holds subscribed already changes nothing. gpodder.net clients upload
 * their whole set again (a simple-API PUT always does), and a change there would show every feed
 * to every device again. */
const addUrls = (run: UploadRun, add: readonly AddItem[]): void => {
  for (const item of add) {
    const held = heldSubscribed(run.draft.state, run.holders, item);
    if (held !== undefined) {
      run.landed.push([checkFeedUrl(item.feedUrl).feedUrl, held.id]);
      continue;
    }
    const decided = decideItem(run.draft.state, item, run.now);
    if (decided.kind === 'failed') {
      run.updateUrls.set(decided.item.feedUrl, '');
      continue;
    }
    run.apply(decided.changes);
    run.landed.push([checkFeedUrl(item.feedUrl).feedUrl, decided.subscriptionId]);
  }
  // What the upload adds stays: the subscriptions its URLs landed on and every other one holding
  // one of its URLs now.
  for (const [, id] of run.landed) run.kept.add(id);
  for (const [sent] of run.landed) {
    for (const holder of run.holders.of(normalizeFeedUrl(sent))) run.kept.add(holder.id);
  }
};

/** A removed URL unsubscribes every subscription it reaches; a URL nothing holds changes nothing. */
const removeUrls = (run: UploadRun, remove: readonly unknown[]): void => {
  for (const url of remove) {
    const checked = checkFeedUrl(url);
    if (!checked.ok) {
      run.updateUrls.set(checked.feedUrl, '');
      continue;
    }
    for (const match of reachedBy(run.draft.state, checked.normalized, run.holders)) {
      // Decision: an older URL of a feed this upload adds does not take it away again; only the
      // same URL in both lists is refused (conflictingUrl), and an alias is read as the add's.
      if (run.kept.has(match.id)) continue;
      if (match.feedUrl !== checked.feedUrl) run.updateUrls.set(checked.feedUrl, match.feedUrl);
      const current = requireSubscription(run.draft.state, match.id);
      if (current.isSubscribed) run.unsubscribe(current);
    }
  }
};

/** A replacing upload unsubscribes every subscription no added URL reached, in the order of their
 * ids: the changes are the same whatever order the state was loaded in. */
const unsubscribeTheRest = (run: UploadRun): void => {
  const all = [...run.draft.state.subscriptions.values()].sort(byId);
  for (const subscription of all) {
    if (run.kept.has(subscription.id) || !subscription.isSubscribed) continue;
    if (subscription.mergedInto !== null || subscription.deleted !== null) continue;
    run.unsubscribe(subscription);
  }
};

/** A URL stored in another spelling is reported with the spelling the client should use. */
const reportSpellings = (run: UploadRun): void => {
  for (const [sent, id] of run.landed) {
    const stored = requireSubscription(run.draft.state, id).feedUrl;
    if (stored !== sent) run.updateUrls.set(sent, stored);
  }
};

export const decideUpload = (
  state: UserSubscriptions,
  event: GpodderUploadRequested,
  now: Instant,
): DecisionOf<GpodderUploadRequested> => {
  const run = new UploadRun(state, now);
  run.apply([deviceUsed(state, event.deviceId, now)]);
  addUrls(run, event.add);
  removeUrls(run, event.remove);
  if (event.replace === true) unsubscribeTheRest(run);
  reportSpellings(run);
  // The device's use is a change, so the user's clock is always now after an upload.
  return {
    outcome: { kind: 'Uploaded', updateUrls: [...run.updateUrls], clock: now },
    changes: finish(state, run.changes, now),
  };
};
