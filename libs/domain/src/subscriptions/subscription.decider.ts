import {
  AddItem,
  DeletionCompleted,
  DeletionFailed,
  DeletionRequested,
  Guid,
  LoggedEvent,
  SubscriptionsAddRequested,
  SubscriptionUpdateRequested,
  UserId,
} from '../events/log-event';
import { Instant } from '../time';
import { Change } from './change';
import { checkFeedUrl, INVALID_GUID_MESSAGE, isGuid, normalizeFeedUrl, normalizeGuid } from './feed-url';
import { AddedItem, FailedItem, RequestOutcome, UpdatedFields } from './outcome';
import { Deletion, Subscription, UserSubscriptions } from './subscription';

/** What one logged event decides: the answer stored for the request, and the changes that make the
 * next state (`evolve`) and the read model (one statement per change kind). Within one decision each
 * key (subscription id, guid, normalised feed_url, deletion id) appears at most once, and a decision
 * that changes anything ends with `ClockAdvanced`. */
export type Decision = { readonly outcome: RequestOutcome; readonly changes: readonly Change[] };

/** Thrown when the state handed to `decide` breaks an invariant (another user's event, a guid whose
 * subscription was not loaded, a clock that went backwards). A bug in the caller, never a 4xx. */
export class DomainInvariantError extends Error {
  override readonly name = 'DomainInvariantError';
}

const invariant: (condition: boolean, message: string) => asserts condition = (condition, message) => {
  if (!condition) throw new DomainInvariantError(message);
};

export const initialState = (userId: UserId, lastInstant: Instant = 0): UserSubscriptions => ({
  userId,
  lastInstant,
  subscriptions: new Map(),
  byGuid: new Map(),
  byFeedUrl: new Map(),
  deletions: new Map(),
});

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

/** The subscription's latest guid: the last entry of its chain. */
export const latestGuid = (subscription: Subscription): Guid => {
  const last = subscription.guids[subscription.guids.length - 1];
  invariant(last !== undefined, `subscription ${subscription.id} has an empty guid chain`);
  return last.guid;
};

const requireSubscription = (state: UserSubscriptions, id: Guid): Subscription => {
  const subscription = state.subscriptions.get(id);
  invariant(subscription !== undefined, `subscription ${id} of user ${state.userId} is not loaded`);
  return subscription;
};

const requireDeletion = (state: UserSubscriptions, deletionId: number): Deletion => {
  const deletion = state.deletions.get(deletionId);
  invariant(deletion !== undefined, `deletion ${deletionId} of user ${state.userId} is not loaded`);
  return deletion;
};

/** Follows `mergedInto` from the subscription `id` to the one it finally resolves to. */
const followMerges = (state: UserSubscriptions, id: Guid): Subscription => {
  const seen = new Set<Guid>();
  let current = requireSubscription(state, id);
  while (current.mergedInto !== null) {
    invariant(!seen.has(current.id), `mergedInto cycle through ${current.id}`);
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
const resolveFeedUrl = (state: UserSubscriptions, normalized: string): Subscription | undefined => {
  const id = state.byFeedUrl.get(normalized);
  return id === undefined ? undefined : followMerges(state, id);
};

// ---------------------------------------------------------------------------------------------
// evolve
// ---------------------------------------------------------------------------------------------

/** A working copy of a state that changes apply to, copying each map the first time a change
 * touches it: a request of many items costs one copy per map, not one per change. `state` answers
 * the current value; a state it answered must not be used after a further `apply` (the maps are
 * shared until then), which is why drafts never leave this module. */
class Draft {
  private lastInstant: Instant;
  private subscriptions?: Map<Guid, Subscription>;
  private byGuid?: Map<Guid, Guid>;
  private byFeedUrl?: Map<string, Guid>;
  private deletions?: Map<number, Deletion>;

  constructor(private readonly base: UserSubscriptions) {
    this.lastInstant = base.lastInstant;
  }

  /** Each kind touches exactly what it names, as its SQL statement does: SubscriptionSaved the row,
   * GuidRecorded `byGuid`, FeedUrlRecorded `byFeedUrl`, DeletionSaved the deletion, ClockAdvanced
   * `lastInstant` (never lowered). `decide` emits the index changes beside the rows, which keeps
   * the maps consistent with the rows. */
  apply(changes: readonly Change[]): this {
    for (const change of changes) {
      switch (change.kind) {
        case 'SubscriptionSaved':
          (this.subscriptions ??= new Map(this.base.subscriptions)).set(
            change.subscription.id,
            change.subscription,
          );
          break;
        case 'GuidRecorded':
          (this.byGuid ??= new Map(this.base.byGuid)).set(change.guid, change.subscriptionId);
          break;
        case 'FeedUrlRecorded':
          (this.byFeedUrl ??= new Map(this.base.byFeedUrl)).set(
            change.normalizedFeedUrl,
            change.subscriptionId,
          );
          break;
        case 'DeletionSaved':
          (this.deletions ??= new Map(this.base.deletions)).set(change.deletion.deletionId, change.deletion);
          break;
        case 'ClockAdvanced':
          this.lastInstant = Math.max(this.lastInstant, change.lastInstant);
          break;
        default: {
          const unexpected: never = change;
          throw new DomainInvariantError(`unknown change ${JSON.stringify(unexpected)}`);
        }
      }
    }
    return this;
  }

  get state(): UserSubscriptions {
    return {
      ...this.base,
      lastInstant: this.lastInstant,
      subscriptions: this.subscriptions ?? this.base.subscriptions,
      byGuid: this.byGuid ?? this.base.byGuid,
      byFeedUrl: this.byFeedUrl ?? this.base.byFeedUrl,
      deletions: this.deletions ?? this.base.deletions,
    };
  }
}

/** Applies changes in order and answers the new state; `state` itself is never modified. */
export const evolveAll = (state: UserSubscriptions, changes: readonly Change[]): UserSubscriptions =>
  changes.length === 0 ? state : new Draft(state).apply(changes).state;

/** Applies one change (see `Draft.apply` for what each kind touches). */
export const evolve = (state: UserSubscriptions, change: Change): UserSubscriptions =>
  evolveAll(state, [change]);

// ---------------------------------------------------------------------------------------------
// Change helpers
// ---------------------------------------------------------------------------------------------

const saved = (subscription: Subscription): Change => ({ kind: 'SubscriptionSaved', subscription });

const guidRecorded = (subscription: Subscription, guid: Guid, since: Instant): Change => ({
  kind: 'GuidRecorded',
  userId: subscription.userId,
  guid,
  subscriptionId: subscription.id,
  since,
});

/** FeedUrlRecorded when `normalized` does not map to `subscription` yet: the latest holder of a
 * normalised feed_url wins it. */
const claimFeedUrl = (state: UserSubscriptions, subscription: Subscription, normalized: string): Change[] =>
  state.byFeedUrl.get(normalized) === subscription.id
    ? []
    : [
        {
          kind: 'FeedUrlRecorded',
          userId: state.userId,
          normalizedFeedUrl: normalized,
          subscriptionId: subscription.id,
        },
      ];

const keyOf = (change: Change): string => {
  switch (change.kind) {
    case 'SubscriptionSaved':
      return `subscription:${change.subscription.id}`;
    case 'GuidRecorded':
      return `guid:${change.guid}`;
    case 'FeedUrlRecorded':
      return `feed-url:${change.normalizedFeedUrl}`;
    case 'DeletionSaved':
      return `deletion:${change.deletion.deletionId}`;
    case 'ClockAdvanced':
      return 'clock';
    default: {
      const unexpected: never = change;
      throw new DomainInvariantError(`unknown change ${JSON.stringify(unexpected)}`);
    }
  }
};

/** The decision's changes, one per key (the last value wins, at the key's first position, which
 * folds to the same state since every kind touches only its own key), then `ClockAdvanced`.
 * Nothing changed → no changes at all, not even the clock. */
const finish = (state: UserSubscriptions, changes: readonly Change[], clock: Instant): readonly Change[] => {
  if (changes.length === 0) return [];
  const byKey = new Map<string, Change>();
  for (const change of changes) byKey.set(keyOf(change), change);
  return [...byKey.values(), { kind: 'ClockAdvanced', userId: state.userId, lastInstant: clock }];
};

const NOT_FOUND: Decision = { outcome: { kind: 'NotFound' }, changes: [] };
const GONE: Decision = { outcome: { kind: 'Gone' }, changes: [] };
const RECORDED_NOTHING: Decision = { outcome: { kind: 'Recorded' }, changes: [] };

// ---------------------------------------------------------------------------------------------
// POST /v1/subscriptions
// ---------------------------------------------------------------------------------------------

type ItemDecision =
  | { readonly kind: 'failed'; readonly item: FailedItem }
  | { readonly kind: 'landed'; readonly subscriptionId: Guid; readonly changes: readonly Change[] };

const failed = (feedUrl: string, message: string): ItemDecision => ({
  kind: 'failed',
  item: { feedUrl, message },
});

const decideItem = (state: UserSubscriptions, item: AddItem, now: Instant): ItemDecision => {
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
    invariant(!state.byGuid.has(id), `candidate guid ${id} is already taken`);
    const created: Subscription = {
      userId: state.userId,
      id,
      guids: [{ guid: id, since: now }],
      feedUrl: feedUrl.feedUrl,
      isSubscribed: true,
      subscriptionChanged: now,
      guidChanged: null,
      deleted: null,
      mergedInto: null,
      deletionId: null,
    };
    return {
      kind: 'landed',
      subscriptionId: id,
      changes: [saved(created), guidRecorded(created, id, now), ...claimFeedUrl(state, created, normalized)],
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
      ...(appendGuid !== undefined ? [guidRecorded(reinstated, appendGuid, now)] : []),
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

const decideAdd = (state: UserSubscriptions, event: SubscriptionsAddRequested, now: Instant): Decision => {
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

// ---------------------------------------------------------------------------------------------
// PATCH /v1/subscriptions/{guid}
// ---------------------------------------------------------------------------------------------

const decideUpdate = (
  state: UserSubscriptions,
  event: SubscriptionUpdateRequested,
  now: Instant,
): Decision => {
  const subscription = resolveSubscription(state, event.guid);
  if (subscription === undefined) return NOT_FOUND;
  // Only a finalized deletion sets `deleted`: a PATCH while the deletion is pending still applies.
  if (subscription.deleted !== null) return GONE;

  const changes: Change[] = [];
  let current = state;
  const apply = (more: readonly Change[]): void => {
    changes.push(...more);
    current = evolveAll(current, more);
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
        guidChanged: now,
      };
      apply([saved(appended), guidRecorded(appended, newGuid, now)]);
      guidFields = { newGuid, guidChanged: now };
    } else if (holder.id !== subscription.id) {
      // Decision: merging into a subscription whose deletion has succeeded would make this one
      // vanish; the PATCH answers 410 as a PATCH on that subscription would, and changes nothing.
      if (holder.deleted !== null) return GONE;
      // Another subscription already has the guid: this one is merged into it and resolves to it
      // everywhere from now on; the answer's new_guid is that subscription's latest guid.
      apply([saved({ ...subscription, mergedInto: holder.id, guidChanged: now })]);
      guidFields = { newGuid: latestGuid(holder), guidChanged: now };
    }
    // Decision: a new_guid this subscription already resolves from is no guid change.
  }

  let fields: UpdatedFields = guidFields;
  if (event.newFeedUrl !== undefined || event.isSubscribed !== undefined) {
    // new_feed_url and is_subscribed apply to what the path guid resolves to now (after a merge:
    // the target), and count as changed whenever given, with subscription_changed now.
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

// ---------------------------------------------------------------------------------------------
// DELETE /v1/subscriptions/{guid} and the deletion saga's results
// ---------------------------------------------------------------------------------------------

const decideDeletion = (
  state: UserSubscriptions,
  event: DeletionRequested,
  sequence: number,
  now: Instant,
): Decision => {
  const subscription = resolveSubscription(state, event.guid);
  if (subscription === undefined) return NOT_FOUND;
  if (subscription.deletionId !== null) {
    const attached = requireDeletion(state, subscription.deletionId);
    // A DELETE while the deletion is pending, or after it succeeded, answers the same deletion id.
    if (attached.status === 'PENDING' || attached.status === 'SUCCESS') {
      return { outcome: { kind: 'DeletionAccepted', deletionId: attached.deletionId }, changes: [] };
    }
  }
  // A new deletion, its id derived from the request's position in the log (replays equal).
  const deletion: Deletion = {
    userId: state.userId,
    deletionId: sequence,
    subscriptionId: subscription.id,
    status: 'PENDING',
    requestedAt: now,
    finishedAt: null,
  };
  return {
    outcome: { kind: 'DeletionAccepted', deletionId: deletion.deletionId },
    changes: finish(
      state,
      [{ kind: 'DeletionSaved', deletion }, saved({ ...subscription, deletionId: deletion.deletionId })],
      now,
    ),
  };
};

/** The deletion takes effect at the instant of the DeletionCompleted record (`now`), so it is a
 * function of the log alone and stays after every earlier change of the user; the event's
 * `deletedAt` records when the saga decided, for audit. */
const decideCompleted = (state: UserSubscriptions, event: DeletionCompleted, now: Instant): Decision => {
  const deletion = state.deletions.get(event.deletionId);
  // Idempotent: an unknown deletion, or one already finished, changes nothing.
  if (deletion === undefined || deletion.status !== 'PENDING') return RECORDED_NOTHING;
  const changes: Change[] = [
    { kind: 'DeletionSaved', deletion: { ...deletion, status: 'SUCCESS', finishedAt: now } },
  ];
  const subscription = requireSubscription(state, deletion.subscriptionId);
  // Decision: only a subscription the deletion is still attached to is deleted. A POST between the
  // DELETE and the saga's result reinstated it and detached the deletion: the user's later intent wins.
  if (subscription.deletionId === deletion.deletionId) {
    // Finalized: deleted and subscription_changed at the same instant, unsubscribed; guids and
    // feed_urls stay so a later POST can match and reinstate it.
    changes.push(
      saved({
        ...subscription,
        isSubscribed: false,
        deleted: now,
        subscriptionChanged: now,
      }),
    );
  }
  return { outcome: { kind: 'Recorded' }, changes: finish(state, changes, now) };
};

const decideFailed = (state: UserSubscriptions, event: DeletionFailed, now: Instant): Decision => {
  const deletion = state.deletions.get(event.deletionId);
  // Idempotent: an unknown deletion, or one already finished, changes nothing.
  if (deletion === undefined || deletion.status !== 'PENDING') return RECORDED_NOTHING;
  const changes: Change[] = [
    { kind: 'DeletionSaved', deletion: { ...deletion, status: 'FAILURE', finishedAt: now } },
  ];
  const subscription = requireSubscription(state, deletion.subscriptionId);
  // The failed deletion is detached, so a later DELETE gets a new deletion id.
  if (subscription.deletionId === deletion.deletionId)
    changes.push(saved({ ...subscription, deletionId: null }));
  return { outcome: { kind: 'Recorded' }, changes: finish(state, changes, now) };
};

// ---------------------------------------------------------------------------------------------
// decide
// ---------------------------------------------------------------------------------------------

/** Decides one logged event of `state.userId`. `now` is the record's time raised to stay strictly
 * monotonic for the user: `nextInstant(recordTime, state.lastInstant)`. */
export const decide = (state: UserSubscriptions, logged: LoggedEvent, now: Instant): Decision => {
  const { event } = logged;
  invariant(
    event.userId === state.userId,
    `event of user ${event.userId} decided on ${state.userId}'s state`,
  );
  invariant(now > state.lastInstant, `now ${now} is not after the user's last instant ${state.lastInstant}`);
  switch (event.type) {
    case 'SubscriptionsAddRequested':
      return decideAdd(state, event, now);
    case 'SubscriptionUpdateRequested':
      return decideUpdate(state, event, now);
    case 'DeletionRequested':
      return decideDeletion(state, event, logged.sequence, now);
    case 'DeletionCompleted':
      return decideCompleted(state, event, now);
    case 'DeletionFailed':
      return decideFailed(state, event, now);
    default: {
      const unexpected: never = event;
      throw new DomainInvariantError(`unknown event ${JSON.stringify(unexpected)}`);
    }
  }
};

/** The decider as one value: `initialState`, `decide`, `evolve`, nothing else. */
export const subscriptionDecider = { initialState, decide, evolve } as const;
export type SubscriptionDecider = typeof subscriptionDecider;
