import { ClientId, SyncActionsPosted, SyncStatus } from '../events/log-event';
import { Change } from '../subscriptions/change';
import { claimFeedUrl, DecisionOf, finish, guidRecorded, saved } from '../subscriptions/decision';
import { Draft } from '../subscriptions/evolve';
import { invariant } from '../subscriptions/invariant';
import { SyncResult } from '../subscriptions/outcome';
import { followMerges, resolveFeedUrl, resolveSubscription } from '../subscriptions/resolve';
import { SeenAction, Subscription, UserSubscriptions } from '../subscriptions/subscription';
import { Instant, Micros } from '../time';
import { podcastGuidOf, SyncId } from './ids';
import { ActionHead, readBody, readHead, SYNC_REASONS, SyncAction } from './sync-action';
import { entityOf, newSubscription } from './sync-view';

// POST /api/v1/sync: SyncActionsPosted.

/** What one action came to: its status, the subscription as it left it (when it reached one), and
 * the changes it makes. */
interface Judged {
  readonly status: SyncStatus;
  readonly reason?: string;
  readonly subscription?: Subscription;
  readonly changes: readonly Change[];
}

/** Where an action is judged: the state the earlier actions left, and who sent it when. */
interface Context {
  readonly state: UserSubscriptions;
  readonly clientId: ClientId;
  readonly now: Instant;
  readonly occurredAt: Micros;
}

/** Actions apply in `occurred_at` order, ties in request order; one without a valid `occurred_at`
 * (rejected, unless it repeats an earlier action) comes first. */
const inApplyOrder = (a: ActionHead, b: ActionHead): number =>
  (a.occurredAt ?? -1) - (b.occurredAt ?? -1) || a.index - b.index;

export const decideSync = (
  state: UserSubscriptions,
  event: SyncActionsPosted,
  now: Instant,
): DecisionOf<SyncActionsPosted> => {
  const results: SyncResult[] = new Array<SyncResult>(event.actions.length);
  // An action_id sent twice in one request counts once, where it first comes in the request; its
  // copies are answered afterwards as retries of it.
  const firsts = new Map<string, ActionHead>();
  const copies: ActionHead[] = [];
  event.actions.forEach((raw, index) => {
    const head = readHead(raw, index);
    if ('status' in head) results[index] = head;
    else if (firsts.has(head.actionId)) copies.push(head);
    else firsts.set(head.actionId, head);
  });
  const changes: Change[] = [];
  const draft = new Draft(state);
  for (const head of [...[...firsts.values()].sort(inApplyOrder), ...copies]) {
    const { result, changes: more } = judge(draft.state, head, event.clientId, now);
    results[head.index] = result;
    changes.push(...more);
    draft.apply(more);
  }
  return { outcome: { kind: 'Synced', results }, changes: finish(state, changes, now, 'sync') };
};

const resultOf = (head: ActionHead, judged: Judged): SyncResult => ({
  ...head.echo,
  status: judged.status,
  ...(judged.reason !== undefined ? { reason: judged.reason } : {}),
  ...(judged.subscription !== undefined
    ? { entity: entityOf(judged.subscription) }
    : { sentData: head.sentData }),
});

/** One action against the state the earlier ones left: a retry answers its first status with the
 * entity as it is now; a new action is checked, applied or not, and remembered with its result. */
const judge = (
  state: UserSubscriptions,
  head: ActionHead,
  clientId: ClientId,
  now: Instant,
): { readonly result: SyncResult; readonly changes: readonly Change[] } => {
  const seen = state.seenActions.get(head.actionId);
  if (seen !== undefined) {
    const judged: Judged =
      seen.fingerprint !== head.fingerprint
        ? { status: 'rejected', reason: SYNC_REASONS.actionIdReused, changes: [] }
        : {
            status: seen.status,
            ...(seen.reason !== null ? { reason: seen.reason } : {}),
            ...(seen.subscriptionId !== null
              ? { subscription: followMerges(state, seen.subscriptionId) }
              : {}),
            changes: [],
          };
    return { result: resultOf(head, judged), changes: [] };
  }
  const body = readBody(head.raw, now);
  const judged: Judged =
    'reason' in body
      ? { status: 'rejected', reason: body.reason, changes: [] }
      : apply(body.action, { state, clientId, now, occurredAt: body.occurredAt });
  const remembered: SeenAction = {
    userId: state.userId,
    actionId: head.actionId,
    status: judged.status,
    reason: judged.reason ?? null,
    fingerprint: head.fingerprint,
    subscriptionId: judged.subscription?.id ?? null,
  };
  return {
    result: resultOf(head, judged),
    changes: [...judged.changes, { kind: 'ActionSeen', action: remembered }],
  };
};

const apply = (action: SyncAction, context: Context): Judged => {
  switch (action.kind) {
    case 'subscribe':
      return subscribe(action, context);
    case 'unsubscribe':
      return unsubscribe(action, context);
    case 'update':
      return update(action, context);
  }
};

const ignored = (subscription: Subscription): Judged => ({ status: 'ignored', subscription, changes: [] });

/** A newer action that changes nothing visible: its part's time still becomes its `occurred_at`,
 * so an older opposite action that arrives later loses. */
const ignoredAt = (subscription: Subscription, times: Partial<Subscription>): Judged => {
  const later = { ...subscription, ...times };
  return { status: 'ignored', subscription: later, changes: [saved(later)] };
};

/** The fields every applied action sets: its time as last_updated, and who sent it. */
const appliedBy = ({ occurredAt, clientId }: Context): Partial<Subscription> => ({
  lastUpdated: occurredAt,
  lastClientId: clientId,
});

const bySyncId = (state: UserSubscriptions, syncId: SyncId): Subscription | undefined => {
  const id = state.bySyncId.get(syncId);
  return id === undefined ? undefined : followMerges(state, id);
};

const subscribe = (action: Extract<SyncAction, { kind: 'subscribe' }>, context: Context): Judged => {
  const { state, now, occurredAt } = context;
  // Without a guid the podcast namespace's one is derived; a guid beats the feed_url, as on /v1.
  const guid = action.guid ?? podcastGuidOf(action.normalized);
  const match = resolveSubscription(state, guid) ?? resolveFeedUrl(state, action.normalized);
  if (match === undefined) {
    invariant(
      !state.byFeedUrl.has(action.normalized),
      () => `feed_url ${action.normalized} is already taken`,
    );
    const created = newSubscription({
      userId: state.userId,
      id: guid,
      feedUrl: action.feedUrl,
      now,
      at: occurredAt,
      clientId: context.clientId,
    });
    return {
      status: 'applied',
      subscription: created,
      changes: [
        saved(created),
        guidRecorded(created, guid),
        ...claimFeedUrl(state, created, action.normalized, true),
      ],
    };
  }
  if (occurredAt <= match.stateTime) return ignored(match);
  if (match.unsubscribedAt === null) return ignoredAt(match, { stateTime: occurredAt });
  // Resubscribed, and reinstated on /v1: deleted cleared and a deletion detached, as a POST does.
  const resubscribed: Subscription = {
    ...match,
    ...appliedBy(context),
    stateTime: occurredAt,
    subscribedAt: occurredAt,
    unsubscribedAt: null,
    isSubscribed: true,
    subscriptionChanged: now,
    deleted: null,
    deletionId: null,
  };
  return { status: 'applied', subscription: resubscribed, changes: [saved(resubscribed)] };
};

const unsubscribe = (action: Extract<SyncAction, { kind: 'unsubscribe' }>, context: Context): Judged => {
  const { now, occurredAt } = context;
  const target = bySyncId(context.state, action.syncId);
  if (target === undefined) return { status: 'rejected', reason: SYNC_REASONS.notFound, changes: [] };
  if (occurredAt <= target.stateTime) return ignored(target);
  if (target.unsubscribedAt !== null) return ignoredAt(target, { stateTime: occurredAt });
  const unsubscribed: Subscription = {
    ...target,
    ...appliedBy(context),
    stateTime: occurredAt,
    unsubscribedAt: occurredAt,
    isSubscribed: false,
    subscriptionChanged: now,
  };
  return { status: 'applied', subscription: unsubscribed, changes: [saved(unsubscribed)] };
};

const update = (action: Extract<SyncAction, { kind: 'update' }>, context: Context): Judged => {
  const { state, now, occurredAt } = context;
  const target = bySyncId(state, action.syncId);
  if (target === undefined) return { status: 'rejected', reason: SYNC_REASONS.notFound, changes: [] };
  if (occurredAt <= target.identityTime) return ignored(target);
  const feedHolder =
    action.feedUrl === undefined ? undefined : resolveFeedUrl(state, action.feedUrl.normalized);
  if (feedHolder !== undefined && feedHolder.id !== target.id)
    return { status: 'rejected', reason: SYNC_REASONS.feedUrlTaken, subscription: target, changes: [] };
  const guidHolder = action.guid === undefined ? undefined : resolveSubscription(state, action.guid);
  if (guidHolder !== undefined && guidHolder.id !== target.id)
    return { status: 'rejected', reason: SYNC_REASONS.guidTaken, subscription: target, changes: [] };
  // A guid new to the user joins the chain; an earlier one of its own becomes its guid again, so
  // the guid of the latest update wins whatever the order of arrival.
  const newGuid = action.guid !== undefined && guidHolder === undefined ? action.guid : undefined;
  const feedUrl = action.feedUrl?.sent ?? target.feedUrl;
  const updated: Subscription = {
    ...target,
    ...appliedBy(context),
    identityTime: occurredAt,
    feedUrl,
    subscriptionChanged: feedUrl !== target.feedUrl ? now : target.subscriptionChanged,
    guids: newGuid !== undefined ? [...target.guids, { guid: newGuid, since: now }] : target.guids,
    guid: action.guid ?? target.guid,
    guidChanged: (action.guid ?? target.guid) !== target.guid ? now : target.guidChanged,
  };
  return {
    status: 'applied',
    subscription: updated,
    changes: [
      saved(updated),
      ...(newGuid !== undefined ? [guidRecorded(updated, newGuid)] : []),
      ...(action.feedUrl !== undefined ? claimFeedUrl(state, updated, action.feedUrl.normalized) : []),
    ],
  };
};
