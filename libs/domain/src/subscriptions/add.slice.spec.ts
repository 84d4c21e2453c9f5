// decideAdd: POST /v1/subscriptions (SubscriptionsAddRequested), given any earlier events.
import {
  added,
  addRequested,
  at,
  candidateFor,
  deciderSpec,
  deletionCompleted,
  deletionRequested,
  failed,
  G1,
  G2,
  G3,
  G4,
  resolved,
  sub,
  T1,
  T2,
  T3,
  T4,
  updateRequested,
  USER,
} from '../testing';
import { normalizeFeedUrl } from './feed-url';
import { resolveSubscription } from './resolve';

const A = 'https://a.example/rss';
const B = 'https://b.example/rss';
const C = 'https://c.example/rss';

const spec = deciderSpec();

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

  it('records each new guid with its place in the chain', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A }])))
      .when(
        at(
          T2,
          addRequested([
            { feed_url: A, guid: G1 },
            { feed_url: B, guid: G2 },
          ]),
        ),
      )
      .thenDecision(({ decision }) => {
        expect(decision.changes.filter((c) => c.kind === 'GuidRecorded')).toEqual([
          {
            kind: 'GuidRecorded',
            userId: USER,
            guid: G1,
            subscriptionId: candidateFor(A),
            since: T2,
            position: 1,
          },
          { kind: 'GuidRecorded', userId: USER, guid: G2, subscriptionId: G2, since: T2, position: 0 },
        ]);
      }));
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

  it('records the feed_url a subscription is created with as taken at creation, and a later one as not', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: C, guid: G2 }])))
      .when(
        at(
          T2,
          addRequested([
            { feed_url: A, guid: G1 },
            { feed_url: B, guid: G1 },
            { feed_url: C, guid: G1 },
          ]),
        ),
      )
      .thenDecision(({ decision }) =>
        expect(decision.changes.filter((c) => c.kind === 'FeedUrlRecorded')).toEqual([
          expect.objectContaining({
            normalizedFeedUrl: normalizeFeedUrl(A),
            subscriptionId: G1,
            atCreation: true,
          }),
          expect.objectContaining({
            normalizedFeedUrl: normalizeFeedUrl(B),
            subscriptionId: G1,
            atCreation: false,
          }),
          expect.objectContaining({
            normalizedFeedUrl: normalizeFeedUrl(C),
            subscriptionId: G1,
            atCreation: false,
          }),
        ]),
      ));
});

describe('guid chains', () => {
  const chainOfThree = [
    at(T1, addRequested([{ feed_url: A, guid: G1 }])),
    at(T2, updateRequested(G1, { new_guid: G2 })),
    at(T3, updateRequested(G2, { new_guid: G3 })),
  ];

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
});
