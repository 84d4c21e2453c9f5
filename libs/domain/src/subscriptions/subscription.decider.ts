import { LogEvent, LoggedEvent } from '../events/log-event';
import { decideDeviceUpdate } from '../gpodder/device.slice';
import { decideEpisodeActions } from '../gpodder/episode-actions.slice';
import { decideSettingsUpdate } from '../gpodder/settings.slice';
import { decideUpload } from '../gpodder/upload.slice';
import { decideSync } from '../sync/sync.slice';
import { Instant } from '../time';
import { decideAdd } from './add.slice';
import { Decision, DecisionOf } from './decision';
import { decideCompleted, decideDeletion, decideFailed } from './deletion.slice';
import { evolve, initialState } from './evolve';
import { DomainInvariantError, invariant } from './invariant';
import { decideFeedMoved } from './moved.slice';
import { UserSubscriptions } from './subscription';
import { decideUpdate } from './update.slice';

/** Decides one logged event of `state.userId`, by the slice of its type, with the outcome its type
 * can have (`OutcomeOf`: each slice's return type says so). `now` is the record's time raised to
 * stay strictly monotonic for the user: `nextInstant(recordTime, state.lastInstant)`. */
export function decide<E extends LogEvent>(
  state: UserSubscriptions,
  logged: LoggedEvent<E>,
  now: Instant,
): DecisionOf<E>;
export function decide(state: UserSubscriptions, logged: LoggedEvent, now: Instant): Decision {
  const { event } = logged;
  invariant(
    event.userId === state.userId,
    () => `event of user ${event.userId} decided on ${state.userId}'s state`,
  );
  invariant(
    now > state.lastInstant,
    () => `now ${now} is not after the user's last instant ${state.lastInstant}`,
  );
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
    case 'DeviceUpdateRequested':
      return decideDeviceUpdate(state, event, now);
    case 'GpodderUploadRequested':
      return decideUpload(state, event, now);
    case 'EpisodeActionsUploaded':
      return decideEpisodeActions(state, event, logged.sequence, now);
    case 'SyncActionsPosted':
      return decideSync(state, event, now);
    case 'FeedMoved':
      return decideFeedMoved(state, event, now);
    case 'SettingsUpdateRequested':
      return decideSettingsUpdate(state, event, now);
    default: {
      const unexpected: never = event;
      throw new DomainInvariantError(`unknown event ${JSON.stringify(unexpected)}`);
    }
  }
}

/** The decider as one value: `initialState`, `decide`, `evolve`, nothing else. */
export const subscriptionDecider = { initialState, decide, evolve } as const;
export type SubscriptionDecider = typeof subscriptionDecider;
