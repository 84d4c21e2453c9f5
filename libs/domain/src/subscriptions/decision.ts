import { Guid, LogEvent } from '../events/log-event';
import { Instant } from '../time';
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
  invariant(entry !== undefined, `guid ${guid} is not in the chain of subscription ${subscription.id}`);
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
    case 'DeviceSaved':
      return `device:${change.device.id}`;
    case 'EpisodeActionsRecorded':
      return `episode-actions:${change.sequence}`;
    default: {
      const unexpected: never = change;
      throw new DomainInvariantError(`unknown change ${JSON.stringify(unexpected)}`);
    }
  }
};

/** The decision's changes, one per key (the last value wins, at the key's first position, which
 * folds to the same state since every kind touches only its own key), then `ClockAdvanced`.
 * Nothing changed → no changes at all, not even the clock. */
export const finish = (
  state: UserSubscriptions,
  changes: readonly Change[],
  clock: Instant,
): readonly Change[] => {
  if (changes.length === 0) return [];
  const byKey = new Map<string, Change>();
  for (const change of changes) byKey.set(keyOf(change), change);
  return [...byKey.values(), { kind: 'ClockAdvanced', userId: state.userId, lastInstant: clock }];
};
