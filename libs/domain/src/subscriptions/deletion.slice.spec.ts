// decideDeletion, decideCompleted, decideFailed: DELETE /v1/subscriptions/{guid} and the deletion
// saga's results, given any earlier events.
import {
  addRequested,
  at,
  deciderSpec,
  deletionAccepted,
  deletionCompleted,
  deletionFailed,
  deletionRequested,
  G1,
  G2,
  G3,
  NOT_FOUND,
  RECORDED,
  resolved,
  T1,
  T2,
  T3,
  T4,
  T5,
  T6,
  T7,
  updateRequested,
  USER,
} from '../testing';
import { normalizeFeedUrl } from './feed-url';

const A = 'https://a.example/rss';
const B = 'https://b.example/rss';

const spec = deciderSpec();

describe('guid chains', () => {
  const chainOfThree = [
    at(T1, addRequested([{ feed_url: A, guid: G1 }])),
    at(T2, updateRequested(G1, { new_guid: G2 })),
    at(T3, updateRequested(G2, { new_guid: G3 })),
  ];

  it('a DELETE by the oldest guid deletes the subscription', () =>
    spec
      .given(...chainOfThree)
      .when(at(T4, deletionRequested(G1), 40))
      .thenOutcome(deletionAccepted(40))
      .thenState((s) => s.deletions.get(40)?.subscriptionId === G1 && resolved(s, G3).deletionId === 40));
});

describe('merged subscriptions', () => {
  const two = at(
    T1,
    addRequested([
      { feed_url: A, guid: G1 },
      { feed_url: B, guid: G2 },
    ]),
  );
  const merge = at(T2, updateRequested(G1, { new_guid: G2 }));

  it('a DELETE by the merged guid deletes the target', () =>
    spec
      .given(two, merge)
      .when(at(T3, deletionRequested(G1), 30))
      .thenOutcome(deletionAccepted(30))
      .thenState(
        (s) => s.deletions.get(30)?.subscriptionId === G2 && s.subscriptions.get(G2)?.deletionId === 30,
      ));
});

describe('DELETE', () => {
  const created = at(T1, addRequested([{ feed_url: A, guid: G1 }]));

  it('answers NotFound for a guid the user does not have', () =>
    spec
      .given(created)
      .when(at(T2, deletionRequested(G2)))
      .thenOutcome(NOT_FOUND)
      .thenNoChanges());

  it('accepts with a deletion id taken from the log position, and leaves the subscription as it is', () =>
    spec
      .given(created)
      .when(at(T2, deletionRequested(G1), 1234))
      .thenOutcome(deletionAccepted(1234))
      .thenState((s) => {
        expect(s.deletions.get(1234)).toEqual({
          userId: s.userId,
          deletionId: 1234,
          subscriptionId: G1,
          status: 'PENDING',
          requestedAt: T2,
          finishedAt: null,
        });
        expect(resolved(s, G1)).toMatchObject({
          deletionId: 1234,
          deleted: null,
          isSubscribed: true,
          subscriptionChanged: T1,
        });
      }));

  it('records the deletion, attaches it to the subscription and advances the clock', () =>
    spec
      .given(created)
      .when(at(T2, deletionRequested(G1), 7))
      .thenChanges(
        {
          kind: 'DeletionSaved',
          deletion: {
            userId: USER,
            deletionId: 7,
            subscriptionId: G1,
            status: 'PENDING',
            requestedAt: T2,
            finishedAt: null,
          },
        },
        { kind: 'SubscriptionSaved', subscription: expect.objectContaining({ id: G1, deletionId: 7 }) },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 },
      ));

  it('a second DELETE while pending answers the same id and changes nothing', () =>
    spec
      .given(created, at(T2, deletionRequested(G1), 7))
      .when(at(T3, deletionRequested(G1), 8))
      .thenOutcome(deletionAccepted(7))
      .thenNoChanges());

  it('a second DELETE after success answers the same id', () =>
    spec
      .given(created, at(T2, deletionRequested(G1), 7), at(T3, deletionCompleted(7, T3)))
      .when(at(T4, deletionRequested(G1), 8))
      .thenOutcome(deletionAccepted(7))
      .thenNoChanges());

  it('a DELETE after a failed deletion gets a new id', () =>
    spec
      .given(created, at(T2, deletionRequested(G1), 7), at(T3, deletionFailed(7)))
      .when(at(T4, deletionRequested(G1), 8))
      .thenOutcome(deletionAccepted(8))
      .thenState(
        (s) => s.deletions.get(7)?.status === 'FAILURE' && s.deletions.get(8)?.status === 'PENDING',
      ));
});

describe('DeletionCompleted finalizes a deletion', () => {
  const created = at(T1, addRequested([{ feed_url: A, guid: G1 }]));
  const requested = at(T2, deletionRequested(G1), 7);

  it('marks it SUCCESS and the subscription deleted and unsubscribed at the record instant, keeping guids and feed_urls', () =>
    spec
      .given(created, at(T2, updateRequested(G1, { new_guid: G2 })), at(T3, deletionRequested(G1), 7))
      .when(at(T5, deletionCompleted(7, T4)))
      .thenOutcome(RECORDED)
      .thenState((s) => {
        expect(s.deletions.get(7)).toMatchObject({ status: 'SUCCESS', finishedAt: T5 });
        expect(resolved(s, G1)).toMatchObject({
          deleted: T5,
          subscriptionChanged: T5,
          isSubscribed: false,
          deletionId: 7,
          feedUrl: A,
          guids: [
            { guid: G1, since: T1 },
            { guid: G2, since: T2 },
          ],
        });
        expect(resolved(s, G2).id).toBe(G1);
        expect(s.byFeedUrl.get(normalizeFeedUrl(A))).toBe(G1);
      }));

  it('applied twice changes nothing the second time', () =>
    spec
      .given(created, requested, at(T3, deletionCompleted(7, T3)))
      .when(at(T4, deletionCompleted(7, T3)))
      .thenOutcome(RECORDED)
      .thenNoChanges());

  it('for an unknown deletion changes nothing', () =>
    spec
      .given(created)
      .when(at(T2, deletionCompleted(99, T2)))
      .thenOutcome(RECORDED)
      .thenNoChanges());

  it('after a failure changes nothing', () =>
    spec
      .given(created, requested, at(T3, deletionFailed(7)))
      .when(at(T4, deletionCompleted(7, T4)))
      .thenOutcome(RECORDED)
      .thenNoChanges());

  it('leaves a subscription that a POST reinstated while the deletion was pending subscribed', () =>
    spec
      .given(created, requested, at(T3, addRequested([{ feed_url: A }])))
      .when(at(T5, deletionCompleted(7, T4)))
      .thenOutcome(RECORDED)
      .thenState((s) => {
        expect(s.deletions.get(7)).toMatchObject({ status: 'SUCCESS', finishedAt: T5 });
        expect(resolved(s, G1)).toMatchObject({
          deleted: null,
          isSubscribed: true,
          deletionId: null,
          subscriptionChanged: T3,
        });
      }));

  it('leaves a subscription merged into another while the deletion was pending, and that other, as they were', () => {
    const two = at(
      T1,
      addRequested([
        { feed_url: A, guid: G1 },
        { feed_url: B, guid: G2 },
      ]),
    );
    return spec
      .given(two, at(T2, deletionRequested(G1), 7), at(T3, updateRequested(G1, { new_guid: G2 })))
      .when(at(T5, deletionCompleted(7, T4)))
      .thenOutcome(RECORDED)
      .thenState((s) => {
        expect(s.deletions.get(7)).toMatchObject({ status: 'SUCCESS', finishedAt: T5 });
        expect(s.subscriptions.get(G1)).toMatchObject({ mergedInto: G2, deleted: null, deletionId: null });
        expect(resolved(s, G1)).toMatchObject({
          id: G2,
          deleted: null,
          isSubscribed: true,
          deletionId: null,
        });
      });
  });

  it('a DELETE by a guid merged while its deletion was pending acts on what it resolves to, the merged row never deleted', () => {
    const two = at(
      T1,
      addRequested([
        { feed_url: A, guid: G1 },
        { feed_url: B, guid: G2 },
      ]),
    );
    return spec
      .given(
        two,
        at(T2, deletionRequested(G1), 7),
        at(T3, updateRequested(G1, { new_guid: G2 })),
        at(T4, deletionCompleted(7, T4)),
      )
      .when(at(T5, deletionRequested(G1), 9))
      .thenOutcome(deletionAccepted(9))
      .thenState((s) => {
        expect(s.deletions.get(9)).toMatchObject({ subscriptionId: G2, status: 'PENDING' });
        expect(s.subscriptions.get(G1)).toMatchObject({ mergedInto: G2, deleted: null, deletionId: null });
      });
  });

  it('takes effect after every earlier change of the user, even when the saga decided before them', () =>
    spec
      .given(created, requested, at(T4, updateRequested(G1, { is_subscribed: false })))
      .when(at(T5, deletionCompleted(7, T3)))
      .thenDecision(({ decision, after }) => {
        expect(decision.changes[decision.changes.length - 1]).toEqual({
          kind: 'ClockAdvanced',
          userId: after.userId,
          lastInstant: T5,
        });
        expect(resolved(after, G1).deleted).toBe(T5);
      }));
});

describe('DeletionFailed', () => {
  const created = at(T1, addRequested([{ feed_url: A, guid: G1 }]));

  it('marks the deletion FAILURE at now and detaches it, leaving the subscription as it was', () =>
    spec
      .given(created, at(T2, deletionRequested(G1), 7))
      .when(at(T3, deletionFailed(7)))
      .thenOutcome(RECORDED)
      .thenState((s) => {
        expect(s.deletions.get(7)).toMatchObject({ status: 'FAILURE', finishedAt: T3 });
        expect(resolved(s, G1)).toMatchObject({
          deletionId: null,
          deleted: null,
          isSubscribed: true,
          subscriptionChanged: T1,
        });
      }));

  it('for a deletion already finished changes nothing', () =>
    spec
      .given(created, at(T2, deletionRequested(G1), 7), at(T3, deletionCompleted(7, T3)))
      .when(at(T4, deletionFailed(7)))
      .thenOutcome(RECORDED)
      .thenNoChanges());
});

describe('POST reinstates a deleted subscription', () => {
  const deleted = [
    at(T1, addRequested([{ feed_url: A, guid: G1 }])),
    at(T2, deletionRequested(G1), 7),
    at(T3, deletionCompleted(7, T3)),
  ];

  it('a DELETE after reinstating gets a new deletion id', () =>
    spec
      .given(...deleted, at(T4, addRequested([{ feed_url: A }])))
      .when(at(T5, deletionRequested(G1), 12))
      .thenOutcome(deletionAccepted(12)));

  it('the second deletion finalizes too', () =>
    spec
      .given(...deleted, at(T4, addRequested([{ feed_url: A }])), at(T5, deletionRequested(G1), 12))
      .when(at(T7, deletionCompleted(12, T6)))
      .thenState((s) => resolved(s, G1).deleted === T7 && s.deletions.get(12)?.status === 'SUCCESS'));
});
