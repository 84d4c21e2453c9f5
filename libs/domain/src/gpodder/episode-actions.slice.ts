import { EpisodeActionsUploaded } from '../events/log-event';
import { Instant } from '../time';
import { Change } from '../subscriptions/change';
import { DecisionOf, finish } from '../subscriptions/decision';
import { Draft } from '../subscriptions/evolve';
import { UserSubscriptions } from '../subscriptions/subscription';
import { deviceUsed, toGpodderTime } from './device';

// POST /api/2/episodes/{user}.json: EpisodeActionsUploaded.

/** Records the actions in order, received at `now` (what a download's `since` compares); an action
 * without a timestamp gets `now`'s. Each device an action names was used now; one the user does not
 * have yet is created by that first use. */
export const decideEpisodeActions = (
  state: UserSubscriptions,
  event: EpisodeActionsUploaded,
  sequence: number,
  now: Instant,
): DecisionOf<EpisodeActionsUploaded> => {
  if (event.actions.length === 0) {
    return { outcome: { kind: 'ActionsRecorded', clock: state.lastInstant }, changes: [] };
  }
  const changes: Change[] = [];
  const draft = new Draft(state);
  for (const action of event.actions) {
    if (action.device === undefined) continue;
    const used = deviceUsed(draft.state, action.device, now);
    changes.push(used);
    draft.apply([used]);
  }
  changes.push({
    kind: 'EpisodeActionsRecorded',
    userId: state.userId,
    sequence,
    receivedAt: now,
    actions: event.actions.map((action) => ({
      ...action,
      timestamp: action.timestamp ?? toGpodderTime(now),
    })),
  });
  return { outcome: { kind: 'ActionsRecorded', clock: now }, changes: finish(state, changes, now) };
};
