import { LoggedEvent, UserId } from '../events/log-event';
import { Change } from '../subscriptions/change';
import { RequestOutcome } from '../subscriptions/outcome';
import { Decision } from '../subscriptions/decision';
import { SubscriptionDecider, subscriptionDecider } from '../subscriptions/subscription.decider';
import { UserSubscriptions } from '../subscriptions/subscription';
import { Instant, nextInstant } from '../time';
import { TimedEvent, USER } from './builders';

/** What the `when` event decided, and where it left the user. */
export interface DecidedWhen {
  readonly before: UserSubscriptions;
  readonly now: Instant;
  readonly decision: Decision;
  readonly after: UserSubscriptions;
}

/** Chainable assertions, run as they are called. `Then` is also an already settled `PromiseLike`, so
 * an `it` whose arrow body is the chain (`it('…', () => spec.given(…).when(…).thenOutcome(…))`) is
 * accepted by jest, which refuses other returned values. */
export interface Then extends PromiseLike<void> {
  thenOutcome(expected: RequestOutcome): Then;
  /** Exactly these changes, in order (jest asymmetric matchers allowed). */
  thenChanges(...expected: Change[]): Then;
  thenNoChanges(): Then;
  /** The state after the `when` decision's changes; fails when the predicate returns false. */
  thenState(predicate: (state: UserSubscriptions) => boolean | void): Then;
  /** Free-form assertions on the whole decision, its `now` and the states around it. */
  thenDecision(assert: (decided: DecidedWhen) => void): Then;
}

export interface When {
  when(event: TimedEvent): Then;
}

export interface Given extends When {
  given(...events: TimedEvent[]): When;
}

const logged = (timed: TimedEvent, position: number): LoggedEvent => ({
  event: timed.event,
  sequence: timed.sequence ?? position,
});

/** Folds one event the way the projector does: `now` raised to stay monotonic, decide, evolve. */
const step = (
  decider: SubscriptionDecider,
  state: UserSubscriptions,
  timed: TimedEvent,
  position: number,
): DecidedWhen => {
  const now = nextInstant(timed.recordTime, state.lastInstant);
  const decision = decider.decide(state, logged(timed, position), now);
  return { before: state, now, decision, after: decision.changes.reduce(decider.evolve, state) };
};

/** given/when/then over the subscription decider. Given events are folded with decide + evolve
 * (their outcomes are not checked); each event's `sequence` defaults to its 1-based position among
 * the given events and the `when` event. */
export const deciderSpec = (
  decider: SubscriptionDecider = subscriptionDecider,
  userId: UserId = USER,
): Given => {
  const whenAfter = (given: readonly TimedEvent[]): When => ({
    when: (event) => {
      let decided: DecidedWhen | undefined;
      const run = (): DecidedWhen => {
        if (decided === undefined) {
          const state = given.reduce(
            (s, timed, i) => step(decider, s, timed, i + 1).after,
            decider.initialState(userId),
          );
          decided = step(decider, state, event, given.length + 1);
        }
        return decided;
      };
      const then: Then = {
        thenOutcome: (expected) => {
          expect(run().decision.outcome).toEqual(expected);
          return then;
        },
        thenChanges: (...expected) => {
          expect(run().decision.changes).toEqual(expected);
          return then;
        },
        thenNoChanges: () => {
          expect(run().decision.changes).toEqual([]);
          return then;
        },
        thenState: (predicate) => {
          if (predicate(run().after) === false) {
            throw new Error(`state does not satisfy ${predicate.toString()}`);
          }
          return then;
        },
        thenDecision: (assert) => {
          assert(run());
          return then;
        },
        then: (onFulfilled, onRejected) => Promise.resolve().then(onFulfilled, onRejected),
      };
      return then;
    },
  });
  return { ...whenAfter([]), given: (...events) => whenAfter(events) };
};
