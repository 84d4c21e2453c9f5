import { Guid, LogEvent } from '../events/log-event';
import { seenFromOtherFace, visiblyChanged } from '../sync/sync-view';
import { Instant, microsOf } from '../time';
import { Change } from './change';
import { DomainInvariantError, invariant } from './invariant';
import { OutcomeOf, RequestOutcome } from './outcome';
import { Subscription, UserSubscriptions } from './subscription';

/** What one logged event decides: the answer stored for the request, and the changes that make the
 * next state (`evolve`) and the read model (one statement per change kind). Within one decision each
 * key (subscription id, guid, normalised feed_url, deletion id) appears at most once, and a decision
 * that changes anything ends with `ClockAdvanced`. */
export type Decision<O extends RequestOutcome = RequestOutcome> = {
  readonly outcome: O;
  readonly changes: readonly Change[];
};

/** The decision of the event `E`, its outcome typed by the event (`OutcomeOf`). */
export type DecisionOf<E extends LogEvent> = Decision<OutcomeOf<E>>;

// The changes the slices build decisions from.

export const saved = (subscription: Subscription): Change => ({ kind: 'SubscriptionSaved', subscription });

/** GuidRecorded for an entry of the subscription's chain, with its `since` and position there. */
export const guidRecorded = (subscription: Subscription, guid: Guid): Change => {
  const position = subscription.guids.findIndex((entry) => entry.guid === guid);
  const entry = subscription.guids[position];
  invariant(entry !== undefined, () => `guid ${guid} is not in the chain of subscription ${subscription.id}`);
  return {
    kind: 'GuidRecorded',
    userId: subscription.userId,
    guid,
    subscriptionId: subscription.id,
    since: entry.since,
    position,
  };
};

/** FeedUrlRecorded when `normalized` does not map to `subscription` yet: the latest holder of a
 * normalised feed_url wins it. `atCreation` when `subscription` is being created with it. */
export const claimFeedUrl = (
  state: UserSubscriptions,
  subscription: Subscription,
  normalized: string,
  atCreation = false,
): Change[] =>
  state.byFeedUrl.get(normalized) === subscription.id
    ? []
    : [
        {
          kind: 'FeedUrlRecorded',
          userId: state.userId,
          normalizedFeedUrl: normalized,
          subscriptionId: subscription.id,
          atCreation,
        },
      ];

/** A change's key within its kind. */
const keyOf = (change: Change): string | number => {
  switch (change.kind) {
    case 'SubscriptionSaved':
      return change.subscription.id;
    case 'GuidRecorded':
      return change.guid;
    case 'FeedUrlRecorded':
      return change.normalizedFeedUrl;
    case 'DeletionSaved':
      return change.deletion.deletionId;
    case 'ClockAdvanced':
      return change.userId;
    case 'DeviceSaved':
      return change.device.id;
    case 'EpisodeActionsRecorded':
      return change.sequence;
    case 'ActionSeen':
      return change.action.actionId;
    case 'SettingsSaved':
      return change.settings.scopeId;
    default: {
      const unexpected: never = change;
      throw new DomainInvariantError(`unknown change ${JSON.stringify(unexpected)}`);
    }
  }
};

/** Who decided the changes: the sync face sets the sync fields itself from its actions; for the
 * other faces they follow from what changed (`seenFromOtherFace`). */
export type Face = 'sync' | 'other';

/** The decision's changes, one per key (the last value wins, at the key's first position, which
 * folds to the same state since every kind touches only its own key), each subscription the sync
 * face sees changed stamped with the next sync cursor, then `ClockAdvanced`. Nothing changed → no
 * changes at all, not even the clock. */
export const finish = (
  state: UserSubscriptions,
  changes: readonly Change[],
  clock: Instant,
  face: Face = 'other',
): readonly Change[] => {
  if (changes.length === 0) return [];
  const folded: Change[] = [];
  // Kind → key → position in `folded`: keys of different kinds may be equal texts.
  const positions = new Map<Change['kind'], Map<string | number, number>>();
  for (const change of changes) {
    let ofKind = positions.get(change.kind);
    if (ofKind === undefined) positions.set(change.kind, (ofKind = new Map()));
    const key = keyOf(change);
    const position = ofKind.get(key);
    if (position === undefined) ofKind.set(key, folded.push(change) - 1);
    else folded[position] = change;
  }
  const syncClock = stampCursors(state, folded, clock, face);
  folded.push({
    kind: 'ClockAdvanced',
    userId: state.userId,
    lastInstant: clock,
    ...(syncClock > state.syncClock ? { syncClock } : {}),
  });
  return folded;
};

/** Gives each saved subscription the sync face sees changed the next cursor of the user's sync
 * clock, in the order of `folded` (strictly increasing, at least castlog's instant): answers the
 * clock after them. */
const stampCursors = (state: UserSubscriptions, folded: Change[], clock: Instant, face: Face): number => {
  let cursor = state.syncClock;
  folded.forEach((change, position) => {
    if (change.kind !== 'SubscriptionSaved') return;
    const before = state.subscriptions.get(change.subscription.id);
    const after =
      face === 'sync' ? change.subscription : seenFromOtherFace(before, change.subscription, clock);
    if (!visiblyChanged(before, after)) {
      if (after !== change.subscription) folded[position] = saved(after);
      return;
    }
    cursor = Math.max(microsOf(clock), cursor + 1);
    folded[position] = saved({ ...after, syncCursor: cursor });
  });
  return cursor;
};
