import { DeletionCompleted, DeletionFailed, DeletionRequested } from '../events/log-event';
import { Instant } from '../time';
import { Change } from './change';
import { Decision, DecisionOf, finish, saved } from './decision';
import { RecordedOutcome } from './outcome';
import { requireDeletion, requireSubscription, resolveSubscription } from './resolve';
import { Deletion, UserSubscriptions } from './subscription';

// DELETE /v1/subscriptions/{guid} (DeletionRequested) and the deletion saga's results
// (DeletionCompleted, DeletionFailed).

const NOT_FOUND: DecisionOf<DeletionRequested> = { outcome: { kind: 'NotFound' }, changes: [] };
const RECORDED_NOTHING: Decision<RecordedOutcome> = { outcome: { kind: 'Recorded' }, changes: [] };

export const decideDeletion = (
  state: UserSubscriptions,
  event: DeletionRequested,
  sequence: number,
  now: Instant,
): DecisionOf<DeletionRequested> => {
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
export const decideCompleted = (
  state: UserSubscriptions,
  event: DeletionCompleted,
  now: Instant,
): DecisionOf<DeletionCompleted> => {
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

export const decideFailed = (
  state: UserSubscriptions,
  event: DeletionFailed,
  now: Instant,
): DecisionOf<DeletionFailed> => {
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
