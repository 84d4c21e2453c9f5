// decideSync: POST /api/v1/sync (SyncActionsPosted), given any earlier events of any face.
import {
  addRequested,
  at,
  CLIENT_A,
  CLIENT_B,
  deciderSpec,
  deletionCompleted,
  deletionRequested,
  G1,
  G2,
  G3,
  newActionId,
  resolved,
  subscribeAction,
  syncAction,
  synced,
  syncPosted,
  T1,
  T2,
  T3,
  T4,
  T5,
  unsubscribeAction,
  updateAction,
  updateRequested,
  USER,
} from '../testing';
import { RequestOutcome, SyncEntity, SyncResult } from '../subscriptions/outcome';
import { UserSubscriptions } from '../subscriptions/subscription';
import { microsOf, toIsoMicros } from '../time';
import { podcastGuidOf, syncIdOf } from './ids';
import { SYNC_REASONS } from './sync-action';

const A = 'https://a.example/rss';
const B = 'https://b.example/rss';
const spec = deciderSpec();

/** `occurred_at` texts, microseconds after T1's minute (the client's clock, not castlog's). */
const when = (micros: number): string => toIsoMicros(microsOf(T1) + micros);
const micros = (offset: number): number => microsOf(T1) + offset;

const S1 = syncIdOf(USER, G1);

const entity = (fields: Partial<SyncEntity> & Pick<SyncEntity, 'subscribedAt'>): SyncEntity => ({
  syncId: S1,
  guid: G1,
  feedUrl: A,
  unsubscribedAt: null,
  ...fields,
});

const result = (
  action: Record<string, unknown>,
  status: SyncResult['status'],
  more: Partial<SyncResult> = {},
): SyncResult => ({
  type: String(action.type),
  action: String(action.action),
  actionId: String(action.action_id),
  status,
  ...more,
});

const resultsOf = (outcome: RequestOutcome): readonly SyncResult[] => {
  if (outcome.kind !== 'Synced') throw new Error(`not a sync outcome: ${outcome.kind}`);
  return outcome.results;
};

const only = (state: UserSubscriptions) => resolved(state, G1);

describe('subscribe', () => {
  it('creates the subscription at its occurred_at, with a sync_id derived from the user and guid', () => {
    const action = subscribeAction(when(5), { feed_url: A, guid: G1 });
    return spec
      .when(at(T2, syncPosted([action])))
      .thenOutcome(synced([result(action, 'applied', { entity: entity({ subscribedAt: micros(5) }) })]))
      .thenState((s) => {
        const created = only(s);
        return (
          created.syncId === S1 &&
          created.stateTime === micros(5) &&
          created.identityTime === micros(5) &&
          created.lastUpdated === micros(5) &&
          created.lastClientId === CLIENT_A &&
          // On /v1 it is a subscription like any other, changed at castlog's instant.
          created.isSubscribed &&
          created.subscriptionChanged === T2 &&
          s.bySyncId.get(S1) === G1
        );
      });
  });

  it('without a guid takes the podcast namespace guid of its feed URL: http and https spellings are one feed', () => {
    const derived = podcastGuidOf('https://podnews.net/rss');
    const first = subscribeAction(when(1), { feed_url: 'https://podnews.net/rss' });
    const second = subscribeAction(when(2), { feed_url: 'http://podnews.net/rss/' });
    return spec.when(at(T2, syncPosted([first, second]))).thenDecision(({ decision }) => {
      // The podcast namespace's published example.
      expect(derived).toBe('9b024349-ccf0-5f69-a609-6b82873eab3c');
      const results = resultsOf(decision.outcome);
      expect(results.map((r) => [r.status, r.entity?.guid])).toEqual([
        ['applied', derived],
        ['ignored', derived],
      ]);
    });
  });

  it('of a subscribed entity is ignored and changes no field, yet an older unsubscribe arriving later loses', () => {
    const unsubscribeOlder = unsubscribeAction(when(20), S1);
    return spec
      .given(
        at(T2, syncPosted([subscribeAction(when(10), { feed_url: A, guid: G1 })])),
        at(T3, syncPosted([subscribeAction(when(30), { feed_url: A })], CLIENT_B)),
      )
      .when(at(T4, syncPosted([unsubscribeOlder])))
      .thenOutcome(
        synced([result(unsubscribeOlder, 'ignored', { entity: entity({ subscribedAt: micros(10) }) })]),
      )
      .thenState((s) => only(s).stateTime === micros(30) && only(s).lastClientId === CLIENT_A);
  });

  it('matches by guid before feed_url, as on /v1, and leaves the identity alone', () => {
    const action = subscribeAction(when(50), { feed_url: B, guid: G1 });
    return spec
      .given(
        at(T2, addRequested([{ feed_url: A, guid: G1 }])),
        at(T2, addRequested([{ feed_url: B, guid: G2 }])),
      )
      .when(at(T3, syncPosted([action])))
      .thenDecision(({ decision }) => {
        const [answer] = resultsOf(decision.outcome);
        expect(answer).toMatchObject({ status: 'ignored', entity: { syncId: S1, feedUrl: A } });
      });
  });

  it('resubscribes an unsubscribed entity at its occurred_at and reinstates one deleted through /v1', () => {
    const action = subscribeAction(microsIso(T5, 7), { feed_url: A });
    return spec
      .given(
        at(T1, addRequested([{ feed_url: A, guid: G1 }])),
        at(T2, deletionRequested(G1), 20),
        at(T3, deletionCompleted(20, T3)),
      )
      .when(at(T5, syncPosted([action])))
      .thenOutcome(
        synced([result(action, 'applied', { entity: entity({ subscribedAt: microsOf(T5) + 7 }) })]),
      )
      .thenState((s) => only(s).deleted === null && only(s).deletionId === null && only(s).isSubscribed);
  });
});

/** An RFC 3339 text of castlog instant `instant` plus `extra` microseconds. */
const microsIso = (instant: number, extra: number): string => toIsoMicros(microsOf(instant) + extra);

describe('unsubscribe', () => {
  const subscribed = at(T2, syncPosted([subscribeAction(when(10), { feed_url: A, guid: G1 })]));

  it('sets unsubscribed_at to its occurred_at; on /v1 is_subscribed false at castlog instant', () => {
    const action = unsubscribeAction(when(11), S1);
    return spec
      .given(subscribed)
      .when(at(T3, syncPosted([action], CLIENT_B)))
      .thenOutcome(
        synced([
          result(action, 'applied', {
            entity: entity({ subscribedAt: micros(10), unsubscribedAt: micros(11) }),
          }),
        ]),
      )
      .thenState(
        (s) =>
          !only(s).isSubscribed && only(s).subscriptionChanged === T3 && only(s).lastClientId === CLIENT_B,
      );
  });

  it('with an equal occurred_at is ignored: a tie never applies', () =>
    spec
      .given(subscribed)
      .when(at(T3, syncPosted([unsubscribeAction(when(10), S1)])))
      .thenDecision(({ decision }) => {
        expect(resultsOf(decision.outcome)[0]?.status).toBe('ignored');
        expect(decision.changes.map((c) => c.kind)).toEqual(['ActionSeen', 'ClockAdvanced']);
      }));

  it('one microsecond later applies', () =>
    spec
      .given(subscribed)
      // One microsecond after the subscribe, with a seventh fraction digit, which is cut.
      .when(at(T3, syncPosted([unsubscribeAction(when(11).replace('Z', '9Z'), S1)])))
      .thenDecision(({ decision }) => {
        expect(resultsOf(decision.outcome)[0]?.status).toBe('applied');
      }));

  it('of an unknown sync_id is rejected: Entity not found, with the data as sent', () => {
    const action = unsubscribeAction(when(1), G3);
    return spec
      .given(subscribed)
      .when(at(T3, syncPosted([action])))
      .thenOutcome(
        synced([result(action, 'rejected', { reason: SYNC_REASONS.notFound, sentData: { sync_id: G3 } })]),
      );
  });

  it('is not made stale by a later update of the identity', () =>
    spec
      .given(subscribed, at(T3, syncPosted([updateAction(when(40), { sync_id: S1, feed_url: B })])))
      .when(at(T4, syncPosted([unsubscribeAction(when(20), S1)])))
      .thenState((s) => only(s).unsubscribedAt === micros(20) && only(s).feedUrl === B));
});

describe('update', () => {
  const subscribed = at(T2, syncPosted([subscribeAction(when(10), { feed_url: A, guid: G1 })]));

  it('sets feed_url and guid; the new guid joins the chain, and both are on /v1', () => {
    const action = updateAction(when(12), { sync_id: S1, feed_url: B, guid: G2 });
    return spec
      .given(subscribed)
      .when(at(T3, syncPosted([action])))
      .thenOutcome(
        synced([
          result(action, 'applied', {
            entity: entity({ guid: G2, feedUrl: B, subscribedAt: micros(10) }),
          }),
        ]),
      )
      .thenState(
        (s) => resolved(s, G2).id === G1 && resolved(s, G2).guidChanged === T3 && only(s).syncId === S1,
      );
  });

  it('older than the identity is ignored; not made stale by a later subscribe', () =>
    spec
      .given(
        subscribed,
        at(T3, syncPosted([updateAction(when(30), { sync_id: S1, feed_url: B })])),
        at(T3, syncPosted([unsubscribeAction(when(35), S1), subscribeAction(when(50), { feed_url: B })])),
      )
      .when(at(T4, syncPosted([updateAction(when(20), { sync_id: S1, feed_url: 'https://c.example/rss' })])))
      .thenDecision(({ decision, after }) => {
        expect(resultsOf(decision.outcome)[0]?.status).toBe('ignored');
        expect(only(after).feedUrl).toBe(B);
      }));

  it('back to an earlier guid of its own: the latest update wins whatever the order of arrival', () => {
    const toG2 = updateAction(when(20), { sync_id: S1, guid: G2 });
    const backToG1 = updateAction(when(30), { sync_id: S1, guid: G1 });
    const inOrder = spec.given(subscribed, at(T3, syncPosted([toG2]))).when(at(T4, syncPosted([backToG1])));
    const reversed = spec.given(subscribed, at(T3, syncPosted([backToG1]))).when(at(T4, syncPosted([toG2])));
    return Promise.all([
      inOrder.thenState((s) => only(s).guid === G1 && resolved(s, G2).id === G1),
      reversed.thenState((s) => only(s).guid === G1 && only(s).identityTime === micros(30)),
    ]).then(() => undefined);
  });

  it("to another subscription's feed_url or guid is rejected and changes no time", () =>
    spec
      .given(subscribed, at(T2, addRequested([{ feed_url: B, guid: G2 }])))
      .when(
        at(
          T3,
          syncPosted([
            updateAction(when(20), { sync_id: S1, feed_url: B }),
            updateAction(when(21), { sync_id: S1, guid: G2 }),
          ]),
        ),
      )
      .thenDecision(({ decision, after }) => {
        const results = resultsOf(decision.outcome);
        expect(results.map((r) => r.reason)).toEqual([SYNC_REASONS.feedUrlTaken, SYNC_REASONS.guidTaken]);
        expect(only(after).identityTime).toBe(micros(10));
      }));
});

describe('one request', () => {
  it('applies in occurred_at order and answers in request order; rejected actions beside applied ones', () => {
    const unsubscribe = unsubscribeAction(when(20), S1);
    const bad = syncAction('subscribe', 'yesterday', { feed_url: B });
    const subscribe = subscribeAction(when(10), { feed_url: A, guid: G1 });
    return spec.when(at(T2, syncPosted([unsubscribe, bad, subscribe]))).thenOutcome(
      synced([
        result(unsubscribe, 'applied', {
          entity: entity({ subscribedAt: micros(10), unsubscribedAt: micros(20) }),
        }),
        result(bad, 'rejected', { reason: SYNC_REASONS.invalidOccurredAt, sentData: { feed_url: B } }),
        // As that action left it: before the unsubscribe, which applies after it.
        result(subscribe, 'applied', { entity: entity({ subscribedAt: micros(10) }) }),
      ]),
    );
  });

  it('judges each action alone: every reason', () => {
    const actions: unknown[] = [
      'not an object',
      { type: 'subscription', action: 'subscribe', action_id: 'nope', occurred_at: when(1), data: {} },
      { ...syncAction('subscribe', when(1), { feed_url: A }), type: 'episode' },
      syncAction('follow', when(1), { feed_url: A }),
      syncAction('subscribe', '2026-07-11T15:30:00', { feed_url: A }),
      syncAction('subscribe', when(1), []),
      syncAction('subscribe', when(1), { feed_url: 'ftp://a.example/rss' }),
      syncAction('subscribe', when(1), { feed_url: A, guid: 'not-a-guid' }),
      syncAction('unsubscribe', when(1), { sync_id: 42 }),
      syncAction('update', when(1), { sync_id: S1 }),
    ];
    return spec.when(at(T2, syncPosted(actions))).thenDecision(({ decision }) => {
      const results = resultsOf(decision.outcome);
      expect(results.map((r) => [r.status, r.reason])).toEqual(
        [
          SYNC_REASONS.notAnObject,
          SYNC_REASONS.invalidActionId,
          SYNC_REASONS.unknownType,
          SYNC_REASONS.unknownAction,
          SYNC_REASONS.invalidOccurredAt,
          SYNC_REASONS.dataNotAnObject,
          'Unsupported protocol',
          SYNC_REASONS.invalidGuid,
          SYNC_REASONS.invalidSyncId,
          SYNC_REASONS.nothingToUpdate,
        ].map((reason) => ['rejected', reason]),
      );
      // A value that is no string is echoed as its JSON text; a missing one as "".
      expect(results[0]).toMatchObject({ type: '', action: '', actionId: '', sentData: {} });
    });
  });

  it('refuses an occurred_at more than one hour ahead of castlog, and takes one just inside', () => {
    const hour = 3_600_000_000;
    const late = subscribeAction(microsIso(T2, hour + 1), { feed_url: A });
    const inside = subscribeAction(microsIso(T2, hour), { feed_url: B });
    return spec.when(at(T2, syncPosted([late, inside]))).thenDecision(({ decision }) => {
      const results = resultsOf(decision.outcome);
      expect(results.map((r) => r.reason ?? r.status)).toEqual([SYNC_REASONS.inTheFuture, 'applied']);
    });
  });
});

describe('retries', () => {
  it('an action_id sent before repeats its first status with the entity as it is now', () => {
    const id = newActionId();
    const first = subscribeAction(when(10), { feed_url: A, guid: G1 }, id);
    return spec
      .given(at(T2, syncPosted([first])), at(T3, syncPosted([unsubscribeAction(when(20), S1)])))
      .when(at(T4, syncPosted([first])))
      .thenOutcome(
        synced([
          result(first, 'applied', {
            entity: entity({ subscribedAt: micros(10), unsubscribedAt: micros(20) }),
          }),
        ]),
      )
      .thenNoChanges();
  });

  it('an action_id twice in one request counts where it first comes; the copy answers as its retry', () => {
    const id = newActionId();
    const valid = subscribeAction(when(10), { feed_url: A, guid: G1 }, id);
    // The copy's occurred_at is not valid, which would put it first in apply order.
    const copy = { ...valid, occurred_at: 'yesterday' };
    const other = subscribeAction(when(5), { feed_url: B }, id);
    return spec.when(at(T2, syncPosted([valid, copy, other]))).thenDecision(({ decision }) => {
      const results = resultsOf(decision.outcome);
      expect(results.map((r) => r.reason ?? r.status)).toEqual([
        'applied',
        'applied',
        SYNC_REASONS.actionIdReused,
      ]);
      expect(results[1]?.entity).toEqual(results[0]?.entity);
    });
  });

  it('the same action_id with other data is rejected and not remembered', () => {
    const id = newActionId();
    const other = subscribeAction(when(10), { feed_url: B }, id);
    return spec
      .given(at(T2, syncPosted([subscribeAction(when(10), { feed_url: A, guid: G1 }, id)])))
      .when(at(T3, syncPosted([other])))
      .thenOutcome(
        synced([
          result(other, 'rejected', { reason: SYNC_REASONS.actionIdReused, sentData: { feed_url: B } }),
        ]),
      )
      .thenNoChanges();
  });

  it('a rejected action is remembered too: its retry is rejected the same way', () => {
    const action = unsubscribeAction(when(10), S1);
    return spec
      .given(at(T2, syncPosted([action])), at(T3, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T4, syncPosted([action])))
      .thenOutcome(
        synced([result(action, 'rejected', { reason: SYNC_REASONS.notFound, sentData: { sync_id: S1 } })]),
      );
  });
});

describe('the other faces on the sync face', () => {
  it('a /v1 subscription has a sync_id, subscribed at castlog instant, with no Client-ID', () =>
    spec.when(at(T2, addRequested([{ feed_url: A, guid: G1 }]))).thenState((s) => {
      const created = only(s);
      return (
        created.syncId === S1 &&
        created.subscribedAt === microsOf(T2) &&
        created.lastClientId === null &&
        created.syncCursor === microsOf(T2)
      );
    }));

  it('a /v1 unsubscribe, deletion or merge unsubscribes there at castlog instant', () =>
    spec
      .given(
        at(
          T1,
          addRequested([
            { feed_url: A, guid: G1 },
            { feed_url: B, guid: G2 },
          ]),
        ),
        at(T2, updateRequested(G2, { is_subscribed: false })),
        at(T3, deletionRequested(G1), 30),
      )
      .when(at(T4, deletionCompleted(30, T4)))
      .thenState(
        (s) =>
          only(s).unsubscribedAt === microsOf(T4) &&
          resolved(s, G2).unsubscribedAt === microsOf(T2) &&
          only(s).lastUpdated === microsOf(T4),
      ));

  it('a /v1 PATCH new_feed_url is an identity change at castlog instant', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, updateRequested(G1, { new_feed_url: B })))
      .thenState((s) => only(s).identityTime === microsOf(T2) && only(s).stateTime === microsOf(T1)));

  it('a sync unsubscribe of a /v1 subscription by its sync_id', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, syncPosted([unsubscribeAction(microsIso(T2, 0), S1)])))
      .thenState((s) => !only(s).isSubscribed && only(s).unsubscribedAt === microsOf(T2)));
});

describe('the sync cursor', () => {
  it('gives every entity one request changes its own cursor, increasing from castlog instant', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(
        at(
          T1,
          addRequested([
            { feed_url: B, guid: G2 },
            { feed_url: 'https://c.example/rss', guid: G3 },
          ]),
        ),
      )
      .thenDecision(({ after, now }) => {
        const cursors = [G1, G2, G3].map((g) => resolved(after, g).syncCursor);
        expect(cursors).toEqual([microsOf(T1), microsOf(now), microsOf(now) + 1]);
        expect(after.syncClock).toBe(microsOf(now) + 1);
      }));

  it('an ignored action that only moves a part time gives no cursor', () =>
    spec
      .given(at(T2, syncPosted([subscribeAction(when(10), { feed_url: A, guid: G1 })])))
      .when(at(T3, syncPosted([subscribeAction(when(20), { feed_url: A })])))
      .thenDecision(({ before, after }) => {
        expect(only(after).stateTime).toBe(micros(20));
        expect(only(after).syncCursor).toBe(only(before).syncCursor);
        expect(after.syncClock).toBe(before.syncClock);
      }));
});
