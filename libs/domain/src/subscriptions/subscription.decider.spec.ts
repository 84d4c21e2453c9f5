import {
  added,
  addRequested,
  at,
  candidateFor,
  deciderSpec,
  deletionAccepted,
  deletionCompleted,
  deletionFailed,
  deletionRequested,
  failed,
  G1,
  G2,
  G3,
  G4,
  GONE,
  NOT_FOUND,
  OTHER_USER,
  RECORDED,
  sub,
  T1,
  T2,
  T3,
  T4,
  T5,
  T6,
  T7,
  updated,
  updateRequested,
  USER,
} from '../testing';
import { Change } from './change';
import { normalizeFeedUrl } from './feed-url';
import { Subscription, UserSubscriptions } from './subscription';
import {
  decide,
  DomainInvariantError,
  evolve,
  evolveAll,
  initialState,
  latestGuid,
  resolveSubscription,
} from './subscription.decider';

const A = 'https://a.example/rss';
const B = 'https://b.example/rss';
const C = 'https://c.example/rss';

const spec = deciderSpec();

/** The subscription a guid resolves to; fails the spec when there is none. */
const resolved = (state: UserSubscriptions, guid: string): Subscription => {
  const subscription = resolveSubscription(state, guid);
  if (subscription === undefined) throw new Error(`${guid} resolves to nothing`);
  return subscription;
};

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
      return [];
  }
};

describe('POST: a feed that matches nothing', () => {
  it('creates a subscription with the item guid', () =>
    spec
      .when(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .thenOutcome(added([sub(G1, A, T1)]))
      .thenState((s) => {
        expect(resolved(s, G1)).toMatchObject({ id: G1, feedUrl: A, isSubscribed: true, deleted: null });
        expect(s.byFeedUrl.get(normalizeFeedUrl(A))).toBe(G1);
      }));

  it('creates it with the guid the API drew when the item has none', () =>
    spec.when(at(T1, addRequested([{ feed_url: A }]))).thenOutcome(added([sub(candidateFor(A), A, T1)])));

  it('stores a guid sent in upper case in lower case', () =>
    spec
      .when(at(T1, addRequested([{ feed_url: A, guid: G1.toUpperCase() }])))
      .thenOutcome(added([sub(G1, A, T1)])));

  it('reads "guid": null as no guid', () =>
    spec
      .when(at(T1, addRequested([{ feed_url: A, guid: null }])))
      .thenOutcome(added([sub(candidateFor(A), A, T1)])));

  it('keeps the feed_url as sent', () =>
    spec
      .when(at(T1, addRequested([{ feed_url: 'HTTPS://A.example:443/rss#top' }])))
      .thenOutcome(
        added([sub(candidateFor('HTTPS://A.example:443/rss#top'), 'HTTPS://A.example:443/rss#top', T1)]),
      ));

  it('leaves the previous state untouched (evolve is immutable)', () =>
    spec.when(at(T1, addRequested([{ feed_url: A, guid: G1 }]))).thenDecision(({ before }) => {
      expect(before.subscriptions.size).toBe(0);
      expect(before.byGuid.size).toBe(0);
      expect(before.lastInstant).toBe(0);
    }));

  it('evolves many changes at once exactly as one by one, leaving the state it started from untouched', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(
        at(
          T2,
          addRequested([
            { feed_url: A, guid: G2 },
            { feed_url: 'https://b.example/rss', guid: G3 },
            { feed_url: 'https://b.example/rss' },
          ]),
        ),
      )
      .thenDecision(({ before, decision }) => {
        const sizes = (s: typeof before) => [
          s.subscriptions.size,
          s.byGuid.size,
          s.byFeedUrl.size,
          s.lastInstant,
        ];
        const untouched = sizes(before);
        const all = evolveAll(before, decision.changes);
        expect(all).toEqual(decision.changes.reduce(evolve, before));
        expect(sizes(before)).toEqual(untouched);
        expect(sizes(all)).not.toEqual(untouched);
      }));
});

describe('POST: feed_urls match after normalising', () => {
  it('HTTPS://A.example:443/rss#top matches https://a.example/rss, keeping the stored spelling', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, addRequested([{ feed_url: 'HTTPS://A.example:443/rss#top' }])))
      .thenOutcome(added([sub(G1, A, T2)]))
      .thenState((s) => s.subscriptions.size === 1 && resolved(s, G1).feedUrl === A));

  it('http://A.EXAMPLE:80/rss matches http://a.example/rss', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: 'http://a.example/rss', guid: G1 }])))
      .when(at(T2, addRequested([{ feed_url: 'http://A.EXAMPLE:80/rss' }])))
      .thenOutcome(added([sub(G1, 'http://a.example/rss', T2)])));

  it('another path does not match', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, addRequested([{ feed_url: 'https://a.example/rss2' }])))
      .thenOutcome(added([sub(candidateFor('https://a.example/rss2'), 'https://a.example/rss2', T2)]))
      .thenState((s) => s.subscriptions.size === 2));

  it('http does not match https', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, addRequested([{ feed_url: 'http://a.example/rss' }])))
      .thenState((s) => s.subscriptions.size === 2));

  it('a feed_url the subscription had before still matches, and becomes its feed_url again', () =>
    spec
      .given(
        at(T1, addRequested([{ feed_url: A, guid: G1 }])),
        at(T2, updateRequested(G1, { new_feed_url: B })),
      )
      .when(at(T3, addRequested([{ feed_url: A }])))
      .thenOutcome(added([sub(G1, A, T3)]))
      .thenState((s) => s.subscriptions.size === 1));

  it('a match is re-subscribed with subscription_changed now', () =>
    spec
      .given(
        at(T1, addRequested([{ feed_url: A, guid: G1 }])),
        at(T2, updateRequested(G1, { is_subscribed: false })),
      )
      .when(at(T3, addRequested([{ feed_url: A }])))
      .thenOutcome(added([sub(G1, A, T3)]))
      .thenState((s) => {
        expect(resolved(s, G1)).toMatchObject({
          isSubscribed: true,
          subscriptionChanged: T3,
          guidChanged: null,
        });
      }));
});

describe('POST: invalid items are failures, in request order', () => {
  const long = 'https://a.example/' + 'x'.repeat(2048);

  it('reports each message with the feed_url as sent, beside the successes', () =>
    spec
      .when(
        at(
          T1,
          addRequested([
            { feed_url: 'example.com/rss4', guid: G4 },
            { feed_url: A, guid: G1 },
            { feed_url: 'ftp://a.example/rss' },
            { feed_url: B, guid: 'not-a-guid' },
            { feed_url: long },
            { feed_url: C },
          ]),
        ),
      )
      .thenOutcome(
        added(
          [sub(G1, A, T1), sub(candidateFor(C), C, T1)],
          [
            failed('example.com/rss4', 'No protocol present'),
            failed('ftp://a.example/rss', 'Unsupported protocol'),
            failed(B, 'Invalid guid'),
            failed(long, 'Invalid URL'),
          ],
        ),
      )
      .thenState((s) => s.subscriptions.size === 2 && resolveSubscription(s, G4) === undefined));

  it('answers a missing or non-string feed_url as Invalid URL with its JSON text', () =>
    spec
      .when(
        at(
          T1,
          addRequested([
            {},
            { feed_url: 42 },
            { feed_url: null },
            { feed_url: { href: A } },
            { feed_url: [A] },
          ]),
        ),
      )
      .thenOutcome(
        added(
          [],
          [
            failed('', 'Invalid URL'),
            failed('42', 'Invalid URL'),
            failed('null', 'Invalid URL'),
            failed(JSON.stringify({ href: A }), 'Invalid URL'),
            failed(JSON.stringify([A]), 'Invalid URL'),
          ],
        ),
      ));

  it('checks the feed_url before the guid', () =>
    spec
      .when(at(T1, addRequested([{ feed_url: 'ftp://a.example/rss', guid: 'nope' }])))
      .thenOutcome(added([], [failed('ftp://a.example/rss', 'Unsupported protocol')])));

  it('refuses a guid that is not a string', () =>
    spec
      .when(at(T1, addRequested([{ feed_url: A, guid: 42 }])))
      .thenOutcome(added([], [failed(A, 'Invalid guid')])));

  it('changes nothing, not even the clock, when every item fails', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, addRequested([{ feed_url: 'nope' }, { feed_url: A, guid: 'nope' }])))
      .thenNoChanges()
      .thenState((s) => s.lastInstant === T1 && resolved(s, G1).subscriptionChanged === T1));
});

describe('POST: a given guid is authoritative', () => {
  it('the guid beats the feed_url: A takes the feed_url, B is left alone', () =>
    spec
      .given(
        at(
          T1,
          addRequested([
            { feed_url: A, guid: G1 },
            { feed_url: B, guid: G2 },
          ]),
        ),
      )
      .when(at(T2, addRequested([{ feed_url: B, guid: G1 }])))
      .thenOutcome(added([sub(G1, B, T2)]))
      .thenState((s) => {
        expect(resolved(s, G1)).toMatchObject({ feedUrl: B, subscriptionChanged: T2 });
        expect(resolved(s, G2)).toMatchObject({ feedUrl: B, subscriptionChanged: T1, isSubscribed: true });
        expect(s.subscriptions.size).toBe(2);
      }));

  it('afterwards, the latest holder of a feed_url wins it', () =>
    spec
      .given(
        at(
          T1,
          addRequested([
            { feed_url: A, guid: G1 },
            { feed_url: B, guid: G2 },
          ]),
        ),
        at(T2, addRequested([{ feed_url: B, guid: G1 }])),
      )
      .when(at(T3, addRequested([{ feed_url: B }])))
      .thenOutcome(added([sub(G1, B, T3)])));

  it('the old feed_url of the guid match still matches it', () =>
    spec
      .given(
        at(
          T1,
          addRequested([
            { feed_url: A, guid: G1 },
            { feed_url: B, guid: G2 },
          ]),
        ),
        at(T2, addRequested([{ feed_url: B, guid: G1 }])),
      )
      .when(at(T3, addRequested([{ feed_url: A }])))
      .thenOutcome(added([sub(G1, A, T3)])));

  it('a known guid with a new feed_url replaces the feed_url', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, addRequested([{ feed_url: B, guid: G1 }])))
      .thenOutcome(added([sub(G1, B, T2)]))
      .thenState((s) => s.subscriptions.size === 1 && s.byFeedUrl.get(normalizeFeedUrl(B)) === G1));

  it('an unknown guid on a matching feed_url becomes its latest guid (a guid change)', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A }])))
      .when(at(T2, addRequested([{ feed_url: A, guid: G1 }])))
      .thenOutcome(added([sub(G1, A, T2)]))
      .thenState((s) => {
        const subscription = resolved(s, G1);
        expect(subscription.id).toBe(candidateFor(A));
        expect(subscription.guids).toEqual([
          { guid: candidateFor(A), since: T1 },
          { guid: G1, since: T2 },
        ]);
        expect(subscription.guidChanged).toBe(T2);
        expect(resolved(s, candidateFor(A))).toBe(subscription);
      }));

  it('the same guid on an equal feed_url changes no guid', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, addRequested([{ feed_url: A, guid: G1 }])))
      .thenOutcome(added([sub(G1, A, T2)]))
      .thenState((s) => resolved(s, G1).guids.length === 1 && resolved(s, G1).guidChanged === null));
});

describe('POST: items of one request that match each other end as one subscription', () => {
  it('two items with the same feed_url answer the same guid', () =>
    spec
      .when(at(T1, addRequested([{ feed_url: A }, { feed_url: 'HTTPS://A.EXAMPLE/rss' }])))
      .thenOutcome(added([sub(candidateFor(A), A, T1), sub(candidateFor(A), A, T1)]))
      .thenState((s) => s.subscriptions.size === 1));

  it('a later item adding a guid makes both answer the latest guid', () =>
    spec
      .when(at(T1, addRequested([{ feed_url: A }, { feed_url: A, guid: G1 }])))
      .thenOutcome(added([sub(G1, A, T1), sub(G1, A, T1)]))
      .thenState((s) => s.subscriptions.size === 1 && resolved(s, G1).id === candidateFor(A)));

  it('two items with the same guid answer the subscription as the request left it', () =>
    spec
      .when(
        at(
          T1,
          addRequested([
            { feed_url: A, guid: G1 },
            { feed_url: B, guid: G1 },
          ]),
        ),
      )
      .thenOutcome(added([sub(G1, B, T1), sub(G1, B, T1)]))
      .thenState((s) => {
        expect(s.subscriptions.size).toBe(1);
        expect(s.byFeedUrl.get(normalizeFeedUrl(A))).toBe(G1);
        expect(s.byFeedUrl.get(normalizeFeedUrl(B))).toBe(G1);
      }));

  it('duplicates of an existing subscription land on it', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, addRequested([{ feed_url: A }, { feed_url: B }, { feed_url: A, guid: G1 }])))
      .thenOutcome(added([sub(G1, A, T2), sub(candidateFor(B), B, T2), sub(G1, A, T2)]))
      .thenState((s) => s.subscriptions.size === 2));

  it('names each row, guid and feed_url once among the changes', () =>
    spec
      .when(at(T1, addRequested([{ feed_url: A }, { feed_url: A, guid: G1 }, { feed_url: B, guid: G1 }])))
      .thenDecision(({ decision }) => {
        const saved = decision.changes.filter((c) => c.kind === 'SubscriptionSaved');
        expect(saved).toHaveLength(1);
        expect(decision.changes.filter((c) => c.kind === 'ClockAdvanced')).toHaveLength(1);
        expect(decision.changes[decision.changes.length - 1]?.kind).toBe('ClockAdvanced');
      }));
});

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

  it('a POST by the oldest guid answers the latest guid', () =>
    spec
      .given(...chainOfThree)
      .when(at(T4, addRequested([{ feed_url: A, guid: G1 }])))
      .thenOutcome(added([sub(G3, A, T4)]))
      .thenState((s) => resolved(s, G1).guids.length === 3));

  it('a POST by feed_url answers the latest guid', () =>
    spec
      .given(...chainOfThree)
      .when(at(T4, addRequested([{ feed_url: A }])))
      .thenOutcome(added([sub(G3, A, T4)])));

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

  it('a DELETE by the oldest guid deletes the subscription', () =>
    spec
      .given(...chainOfThree)
      .when(at(T4, deletionRequested(G1), 40))
      .thenOutcome(deletionAccepted(40))
      .thenState((s) => s.deletions.get(40)?.subscriptionId === G1 && resolved(s, G3).deletionId === 40));
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

  it('a POST with the merged guid lands on the target', () =>
    spec
      .given(two, merge)
      .when(at(T3, addRequested([{ feed_url: B, guid: G1 }])))
      .thenOutcome(added([sub(G2, B, T3)]))
      .thenState((s) => s.subscriptions.get(G1)?.subscriptionChanged === T1));

  it("a POST with the merged subscription's feed_url lands on the target", () =>
    spec
      .given(two, merge)
      .when(at(T3, addRequested([{ feed_url: A }])))
      .thenOutcome(added([sub(G2, A, T3)]))
      .thenState((s) => s.subscriptions.size === 2));

  it('a PATCH by the merged guid acts on the target', () =>
    spec
      .given(two, merge)
      .when(at(T3, updateRequested(G1, { is_subscribed: false })))
      .thenOutcome(updated({ isSubscribed: false, subscriptionChanged: T3 }))
      .thenState(
        (s) =>
          s.subscriptions.get(G2)?.isSubscribed === false && s.subscriptions.get(G1)?.isSubscribed === true,
      ));

  it('a DELETE by the merged guid deletes the target', () =>
    spec
      .given(two, merge)
      .when(at(T3, deletionRequested(G1), 30))
      .thenOutcome(deletionAccepted(30))
      .thenState(
        (s) => s.deletions.get(30)?.subscriptionId === G2 && s.subscriptions.get(G2)?.deletionId === 30,
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

  it('by feed_url: subscribed, deleted cleared, subscription_changed now', () =>
    spec
      .given(...deleted)
      .when(at(T4, addRequested([{ feed_url: 'https://A.EXAMPLE/rss' }])))
      .thenOutcome(added([sub(G1, A, T4)]))
      .thenState((s) => {
        expect(resolved(s, G1)).toMatchObject({
          deleted: null,
          isSubscribed: true,
          subscriptionChanged: T4,
          deletionId: null,
        });
        expect(s.deletions.get(7)?.status).toBe('SUCCESS');
      }));

  it('by guid', () =>
    spec
      .given(...deleted)
      .when(at(T4, addRequested([{ feed_url: B, guid: G1 }])))
      .thenOutcome(added([sub(G1, B, T4)])));

  it('a PATCH after reinstating applies', () =>
    spec
      .given(...deleted, at(T4, addRequested([{ feed_url: A }])))
      .when(at(T5, updateRequested(G1, { is_subscribed: false })))
      .thenOutcome(updated({ isSubscribed: false, subscriptionChanged: T5 })));

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
