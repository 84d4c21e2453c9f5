// decide: the dispatch to the slices, the outcome typed by the event, the instant each decision is
// stamped with, and the invariants its caller keeps.
import fc from 'fast-check';
import {
  ACCOUNT,
  added,
  addRequested,
  at,
  deciderSpec,
  deletionRequested,
  deviceUpdated,
  episodeAction,
  episodeActionsUploaded,
  G1,
  G2,
  G3,
  OTHER_USER,
  settingsUpdated,
  sub,
  T1,
  T2,
  T3,
  updated,
  updateRequested,
  uploadRequested,
  USER,
} from '../testing';
import { GpodderUploadRequested, SubscriptionUpdateRequested } from '../events/log-event';
import { foldHistory, historyArbitrary } from '../testing/histories';
import { Change } from './change';
import { initialState } from './evolve';
import { DomainInvariantError } from './invariant';
import {
  AddedOutcome,
  isOutcomeOf,
  OutcomeOf,
  SettingsRefusedOutcome,
  SettingsUpdatedOutcome,
  UploadedOutcome,
} from './outcome';
import { decide } from './subscription.decider';

const A = 'https://a.example/rss';
const B = 'https://b.example/rss';
const C = 'https://c.example/rss';

const spec = deciderSpec();

/** Every instant a change carries, wherever it sits. */
const instantsOf = (change: Change): number[] => {
  switch (change.kind) {
    case 'SubscriptionSaved': {
      const s = change.subscription;
      return [s.subscriptionChanged, s.guidChanged, s.deleted, ...s.guids.map((g) => g.since)].filter(
        (i): i is number => i !== null,
      );
    }
    case 'GuidRecorded':
      return [change.since];
    case 'DeletionSaved':
      return [change.deletion.requestedAt, change.deletion.finishedAt].filter((i): i is number => i !== null);
    case 'ClockAdvanced':
      return [change.lastInstant];
    case 'FeedUrlRecorded':
    case 'DeviceSaved':
    case 'ActionSeen':
    case 'SettingsSaved':
      return [];
    case 'EpisodeActionsRecorded':
      return [change.receivedAt];
  }
};

describe('one request, one instant, monotonic per user', () => {
  it("every instant a decision's changes carry is its now", () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, addRequested([{ feed_url: A, guid: G2 }, { feed_url: B }, { feed_url: C, guid: G1 }])))
      .thenDecision(({ decision, now }) => {
        expect(now).toBe(T2);
        const touched = decision.changes.flatMap((change) =>
          change.kind === 'SubscriptionSaved'
            ? [change.subscription.subscriptionChanged, change.subscription.guidChanged ?? now]
            : change.kind === 'GuidRecorded' || change.kind === 'ClockAdvanced'
              ? instantsOf(change)
              : [],
        );
        expect(touched.length).toBeGreaterThan(0);
        expect(new Set(touched)).toEqual(new Set([now]));
      }));

  it('a PATCH stamps every change with its now', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, updateRequested(G1, { new_guid: G2, new_feed_url: B, is_subscribed: false })))
      .thenDecision(({ decision, now }) => {
        const [saved] = decision.changes.filter((c) => c.kind === 'SubscriptionSaved');
        expect(saved).toMatchObject({ subscription: { subscriptionChanged: now, guidChanged: now } });
        expect(decision.changes.filter((c) => c.kind === 'GuidRecorded')).toEqual([
          expect.objectContaining({ since: now }),
        ]);
      }));

  it('a record time not after the last instant is raised past it', () =>
    spec
      .given(at(T2, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T1, addRequested([{ feed_url: B, guid: G2 }])))
      .thenOutcome(added([sub(G2, B, T2 + 1)]))
      .thenState((s) => s.lastInstant === T2 + 1));

  it('two requests in the same millisecond get distinct instants', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T1, updateRequested(G1, { is_subscribed: false })))
      .thenOutcome(updated({ isSubscribed: false, subscriptionChanged: T1 + 1 })));

  it('a gpodder.net upload stamps what it creates, reinstates and unsubscribes with its now', () =>
    spec
      .given(
        at(T1, addRequested([{ feed_url: A, guid: G1 }])),
        at(T1, updateRequested(G1, { is_subscribed: false })),
      )
      .when(at(T2, uploadRequested('phone', { add: [A, B], remove: [], replace: true })))
      .thenDecision(({ decision, now }) => {
        const saved = decision.changes.filter((c) => c.kind === 'SubscriptionSaved');
        expect(saved).toHaveLength(2);
        expect(saved.map((c) => c.subscription.subscriptionChanged)).toEqual([now, now]);
        expect(decision.changes[decision.changes.length - 1]).toEqual({
          kind: 'ClockAdvanced',
          userId: USER,
          lastInstant: now,
          syncClock: now * 1000 + 1,
        });
      }));

  it('episode actions are received at the now of their upload', () =>
    spec
      .given(at(T2, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T1, episodeActionsUploaded([episodeAction(A, 'e1')])))
      .thenDecision(({ decision, now }) => {
        expect(now).toBe(T2 + 1);
        expect(new Set(decision.changes.flatMap(instantsOf))).toEqual(new Set([now]));
      }));

  it('a decision that changes nothing leaves the clock', () =>
    spec
      .given(at(T2, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T3, deletionRequested(G3)))
      .thenNoChanges()
      .thenState((s) => s.lastInstant === T2));
});

describe('invariants the caller must keep', () => {
  it("refuses another user's event", () =>
    expect(() =>
      decide(initialState(USER), { event: deletionRequested(G1, OTHER_USER), sequence: 1 }, T1),
    ).toThrow(DomainInvariantError));

  it('refuses a now that is not after the last instant', () =>
    expect(() => decide(initialState(USER, T2), { event: deletionRequested(G1), sequence: 1 }, T2)).toThrow(
      DomainInvariantError,
    ));
});

describe('the outcome is typed by the event that asked for it', () => {
  it('a POST is answered Added, and its type says so', () => {
    const decision = decide(initialState(USER), { event: addRequested([{ feed_url: A }]), sequence: 1 }, T1);
    const outcome: AddedOutcome = decision.outcome;
    expect(outcome.success).toHaveLength(1);
  });

  it('a PATCH is answered Updated, NotFound or Gone, and nothing else', () => {
    const status = (outcome: OutcomeOf<SubscriptionUpdateRequested>): number => {
      switch (outcome.kind) {
        case 'Updated':
          return 200;
        case 'NotFound':
          return 404;
        case 'Gone':
          return 410;
        default: {
          const unexpected: never = outcome;
          return unexpected;
        }
      }
    };
    const event = updateRequested(G1, { is_subscribed: false });
    expect(status(decide(initialState(USER), { event, sequence: 1 }, T1).outcome)).toBe(404);
  });

  it('every outcome decide answers is one its event can have (OUTCOME_KINDS)', () =>
    fc.assert(
      fc.property(historyArbitrary(), (history) => {
        for (const { logged, decision } of foldHistory(history).steps) {
          expect([logged.event.type, isOutcomeOf(logged.event, decision.outcome)]).toEqual([
            logged.event.type,
            true,
          ]);
        }
      }),
      { numRuns: 100 },
    ));

  it('a gpodder.net upload is answered Uploaded, with the URLs to rewrite and the clock', () => {
    const event: GpodderUploadRequested = uploadRequested('phone', { add: ['ftp://a.example/rss'] });
    const outcome: UploadedOutcome = decide(initialState(USER, T1), { event, sequence: 1 }, T2).outcome;
    expect(outcome.updateUrls).toEqual([['ftp://a.example/rss', '']]);
    expect(outcome.clock).toBe(T2);
  });

  it('a device update is answered DeviceUpdated, episode actions ActionsRecorded, and nothing else', () => {
    expect(isOutcomeOf(deviceUpdated('phone'), { kind: 'DeviceUpdated' })).toBe(true);
    expect(isOutcomeOf(deviceUpdated('phone'), { kind: 'Recorded' })).toBe(false);
    expect(isOutcomeOf(episodeActionsUploaded([]), { kind: 'ActionsRecorded', clock: 0 })).toBe(true);
    expect(isOutcomeOf(episodeActionsUploaded([]), { kind: 'Uploaded', updateUrls: [], clock: 0 })).toBe(
      false,
    );
    expect(isOutcomeOf(uploadRequested('phone', {}), { kind: 'Added', success: [], failure: [] })).toBe(
      false,
    );
  });

  it('a settings change is answered SettingsUpdated or SettingsRefused, and nothing else', () => {
    const event = settingsUpdated(ACCOUNT, { set: { a: 1 } });
    expect(isOutcomeOf(event, { kind: 'SettingsUpdated', keys: 1 })).toBe(true);
    expect(isOutcomeOf(event, { kind: 'SettingsRefused', message: 'too many' })).toBe(true);
    expect(isOutcomeOf(event, { kind: 'DeviceUpdated' })).toBe(false);
    const outcome: SettingsUpdatedOutcome | SettingsRefusedOutcome = decide(
      initialState(USER, T1),
      { event, sequence: 1 },
      T2,
    ).outcome;
    expect(outcome).toEqual({ kind: 'SettingsUpdated', keys: 1 });
  });

  it('isOutcomeOf refuses an outcome the event cannot have', () => {
    expect(isOutcomeOf(addRequested([{ feed_url: A }]), { kind: 'NotFound' })).toBe(false);
    expect(isOutcomeOf(deletionRequested(G1), { kind: 'Gone' })).toBe(false);
    expect(isOutcomeOf(updateRequested(G1, { is_subscribed: false }), { kind: 'Gone' })).toBe(true);
  });
});
