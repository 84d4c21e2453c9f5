// decideUpdate: PATCH /v1/subscriptions/{guid} (SubscriptionUpdateRequested), given any earlier events.
import {
  addRequested,
  at,
  deciderSpec,
  deletionCompleted,
  deletionRequested,
  G1,
  G2,
  G3,
  GONE,
  NOT_FOUND,
  resolved,
  T1,
  T2,
  T3,
  T4,
  T5,
  updated,
  updateRequested,
} from '../testing';
import { normalizeFeedUrl } from './feed-url';
import { latestGuid } from './resolve';

const A = 'https://a.example/rss';
const B = 'https://b.example/rss';
const C = 'https://c.example/rss';

const spec = deciderSpec();

describe('guid chains', () => {
  const chainOfThree = [
    at(T1, addRequested([{ feed_url: A, guid: G1 }])),
    at(T2, updateRequested(G1, { new_guid: G2 })),
    at(T3, updateRequested(G2, { new_guid: G3 })),
  ];

  it('PATCH new_guid with a new guid appends it and answers it', () =>
    spec
      .given(chainOfThree[0])
      .when(chainOfThree[1])
      .thenOutcome(updated({ newGuid: G2, guidChanged: T2 })));

  it('every guid of a chain of three resolves to one subscription whose latest guid is the third', () =>
    spec
      .given(...chainOfThree.slice(0, 2))
      .when(chainOfThree[2])
      .thenOutcome(updated({ newGuid: G3, guidChanged: T3 }))
      .thenState((s) => {
        const subscription = resolved(s, G1);
        expect(resolved(s, G2)).toBe(subscription);
        expect(resolved(s, G3)).toBe(subscription);
        expect(latestGuid(subscription)).toBe(G3);
        expect(subscription.guids).toEqual([
          { guid: G1, since: T1 },
          { guid: G2, since: T2 },
          { guid: G3, since: T3 },
        ]);
        expect(subscription).toMatchObject({ guidChanged: T3, subscriptionChanged: T1 });
      }));

  it('a PATCH by the middle guid acts on the subscription', () =>
    spec
      .given(...chainOfThree)
      .when(at(T4, updateRequested(G2, { is_subscribed: false })))
      .thenOutcome(updated({ isSubscribed: false, subscriptionChanged: T4 }))
      .thenState((s) => resolved(s, G3).isSubscribed === false));

  it('a PATCH with a new_guid the chain already has changes no guid', () =>
    spec
      .given(...chainOfThree)
      .when(at(T4, updateRequested(G3, { new_guid: G1 })))
      .thenOutcome(updated({}))
      .thenNoChanges());
});

describe('PATCH', () => {
  const created = at(T1, addRequested([{ feed_url: A, guid: G1 }]));

  it('answers NotFound for a guid the user does not have', () =>
    spec
      .given(created)
      .when(at(T2, updateRequested(G2, { is_subscribed: false })))
      .thenOutcome(NOT_FOUND)
      .thenNoChanges());

  it('new_feed_url changes the feed_url with subscription_changed now', () =>
    spec
      .given(created)
      .when(at(T2, updateRequested(G1, { new_feed_url: B })))
      .thenOutcome(updated({ newFeedUrl: B, subscriptionChanged: T2 }))
      .thenState((s) => {
        expect(resolved(s, G1)).toMatchObject({ feedUrl: B, subscriptionChanged: T2, guidChanged: null });
        expect(s.byFeedUrl.get(normalizeFeedUrl(B))).toBe(G1);
      }));

  it('a new_feed_url equal to the stored one still counts as changed', () =>
    spec
      .given(created)
      .when(at(T2, updateRequested(G1, { new_feed_url: A })))
      .thenOutcome(updated({ newFeedUrl: A, subscriptionChanged: T2 })));

  it('is_subscribed is set with subscription_changed now', () =>
    spec
      .given(created)
      .when(at(T2, updateRequested(G1, { is_subscribed: false })))
      .thenOutcome(updated({ isSubscribed: false, subscriptionChanged: T2 }))
      .thenState((s) => resolved(s, G1).isSubscribed === false));

  it('answers every changed field at one instant', () =>
    spec
      .given(created)
      .when(at(T2, updateRequested(G1, { new_feed_url: B, new_guid: G2, is_subscribed: false })))
      .thenOutcome(
        updated({
          newFeedUrl: B,
          isSubscribed: false,
          subscriptionChanged: T2,
          newGuid: G2,
          guidChanged: T2,
        }),
      )
      .thenState((s) => {
        expect(resolved(s, G2)).toMatchObject({ id: G1, feedUrl: B, isSubscribed: false });
      }));

  it('resolves a path guid sent in upper case', () =>
    spec
      .given(created)
      .when(at(T2, updateRequested(G1.toUpperCase(), { is_subscribed: false })))
      .thenOutcome(updated({ isSubscribed: false, subscriptionChanged: T2 })));

  it('applies while a deletion is pending', () =>
    spec
      .given(created, at(T2, deletionRequested(G1)))
      .when(at(T3, updateRequested(G1, { is_subscribed: false })))
      .thenOutcome(updated({ isSubscribed: false, subscriptionChanged: T3 })));

  it('answers Gone once the deletion has succeeded', () =>
    spec
      .given(created, at(T2, deletionRequested(G1), 9), at(T3, deletionCompleted(9, T3)))
      .when(at(T4, updateRequested(G1, { is_subscribed: true })))
      .thenOutcome(GONE)
      .thenNoChanges());
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

  it('PATCH new_guid naming another subscription merges into it and answers its latest guid', () =>
    spec
      .given(two, at(T2, updateRequested(G2, { new_guid: G3 })))
      .when(at(T3, updateRequested(G1, { new_guid: G2 })))
      .thenOutcome(updated({ newGuid: G3, guidChanged: T3 }))
      .thenState((s) => {
        expect(s.subscriptions.get(G1)).toMatchObject({ mergedInto: G2, guidChanged: T3 });
        expect(resolved(s, G1).id).toBe(G2);
        expect(latestGuid(resolved(s, G1))).toBe(G3);
      }));

  it('new_feed_url and is_subscribed of the same PATCH apply to the target', () =>
    spec
      .given(two)
      .when(at(T2, updateRequested(G1, { new_guid: G2, new_feed_url: C, is_subscribed: false })))
      .thenOutcome(
        updated({
          newFeedUrl: C,
          isSubscribed: false,
          subscriptionChanged: T2,
          newGuid: G2,
          guidChanged: T2,
        }),
      )
      .thenState((s) => {
        expect(s.subscriptions.get(G2)).toMatchObject({
          feedUrl: C,
          isSubscribed: false,
          subscriptionChanged: T2,
        });
        expect(s.subscriptions.get(G1)).toMatchObject({
          feedUrl: A,
          isSubscribed: true,
          subscriptionChanged: T1,
        });
      }));

  it('a PATCH by the merged guid acts on the target', () =>
    spec
      .given(two, merge)
      .when(at(T3, updateRequested(G1, { is_subscribed: false })))
      .thenOutcome(updated({ isSubscribed: false, subscriptionChanged: T3 }))
      .thenState(
        (s) =>
          s.subscriptions.get(G2)?.isSubscribed === false && s.subscriptions.get(G1)?.isSubscribed === true,
      ));

  it('the target merged again resolves through both merges', () =>
    spec
      .given(two, merge, at(T3, addRequested([{ feed_url: C, guid: G3 }])))
      .when(at(T4, updateRequested(G2, { new_guid: G3 })))
      .thenOutcome(updated({ newGuid: G3, guidChanged: T4 }))
      .thenState((s) => resolved(s, G1).id === G3));

  it('merging into a subscription whose deletion succeeded answers Gone and changes nothing', () =>
    spec
      .given(two, at(T2, deletionRequested(G2), 5), at(T3, deletionCompleted(5, T3)))
      .when(at(T4, updateRequested(G1, { new_guid: G2, is_subscribed: false })))
      .thenOutcome(GONE)
      .thenNoChanges());
});

describe('POST reinstates a deleted subscription', () => {
  const deleted = [
    at(T1, addRequested([{ feed_url: A, guid: G1 }])),
    at(T2, deletionRequested(G1), 7),
    at(T3, deletionCompleted(7, T3)),
  ];

  it('a PATCH after reinstating applies', () =>
    spec
      .given(...deleted, at(T4, addRequested([{ feed_url: A }])))
      .when(at(T5, updateRequested(G1, { is_subscribed: false })))
      .thenOutcome(updated({ isSubscribed: false, subscriptionChanged: T5 })));
});
