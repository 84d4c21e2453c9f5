// decideFeedMoved: the feed resolver's FeedMoved, given any earlier events.
import {
  addRequested,
  at,
  deciderSpec,
  deletionCompleted,
  deletionRequested,
  feedMoved,
  G1,
  G2,
  G3,
  moved,
  resolved,
  T1,
  T2,
  T3,
  T4,
  T5,
  updateRequested,
} from '../testing';
import { microsOf } from '../time';
import { normalizeFeedUrl } from './feed-url';

const OLD = 'https://old.example/feed.xml';
const NEW = 'https://new.example/feed.xml';
const ELSEWHERE = 'https://elsewhere.example/feed.xml';

const spec = deciderSpec();
const subscribedToOld = at(T1, addRequested([{ feed_url: OLD, guid: G1 }]));

describe('a feed that moved for good', () => {
  it('gives each named subscription still on the old feed the new feed_url, as a PATCH would', () =>
    spec
      .given(subscribedToOld)
      .when(at(T2, feedMoved(OLD, NEW, [G1])))
      .thenOutcome(moved([G1]))
      .thenState((s) => {
        expect(resolved(s, G1)).toMatchObject({ feedUrl: NEW, isSubscribed: true, subscriptionChanged: T2 });
        // The new URL now finds the subscription, and the old one still does (as after a PATCH).
        expect(s.byFeedUrl.get(normalizeFeedUrl(NEW))).toBe(G1);
        expect(s.byFeedUrl.get(normalizeFeedUrl(OLD))).toBe(G1);
      }));

  it('moves an unsubscribed subscription too, which stays unsubscribed', () =>
    spec
      .given(subscribedToOld, at(T2, updateRequested(G1, { is_subscribed: false })))
      .when(at(T3, feedMoved(OLD, NEW, [G1], 'new-feed-url')))
      .thenOutcome(moved([G1]))
      .thenState((s) => resolved(s, G1).feedUrl === NEW && !resolved(s, G1).isSubscribed));

  it('answers the latest guid of a subscription whose guid changed', () =>
    spec
      .given(subscribedToOld, at(T2, updateRequested(G1, { new_guid: G2 })))
      .when(at(T3, feedMoved(OLD, NEW, [G1])))
      .thenOutcome(moved([G2])));

  it('is seen by the sync face as an update, with the next cursor', () =>
    spec
      .given(subscribedToOld)
      .when(at(T2, feedMoved(OLD, NEW, [G1])))
      .thenDecision(({ before, after }) => {
        expect(resolved(after, G1).identityTime).toBe(microsOf(T2));
        expect(resolved(after, G1).stateTime).toBe(resolved(before, G1).stateTime);
        expect(resolved(after, G1).syncCursor).toBeGreaterThan(resolved(before, G1).syncCursor);
        expect(resolved(after, G1).lastClientId).toBeNull();
      }));

  it('moves nothing when repeated: the subscription is no longer on the old feed', () =>
    spec
      .given(subscribedToOld, at(T2, feedMoved(OLD, NEW, [G1])))
      .when(at(T3, feedMoved(OLD, NEW, [G1])))
      .thenOutcome(moved([]))
      .thenNoChanges());

  it('leaves a subscription the user moved elsewhere after the resolver looked', () =>
    spec
      .given(subscribedToOld, at(T2, updateRequested(G1, { new_feed_url: ELSEWHERE })))
      .when(at(T3, feedMoved(OLD, NEW, [G1])))
      .thenOutcome(moved([]))
      .thenNoChanges());

  it('finds the old feed in any spelling of it', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: 'HTTPS://OLD.example:443/feed.xml#top', guid: G1 }])))
      .when(at(T2, feedMoved(OLD, NEW, [G1])))
      .thenOutcome(moved([G1])));

  it('leaves a deleted subscription, and moves one whose deletion is still pending', () =>
    spec
      .given(
        subscribedToOld,
        at(T2, addRequested([{ feed_url: 'https://old.example/feed.xml?copy', guid: G2 }])),
        at(T3, updateRequested(G2, { new_feed_url: OLD })),
        at(T3, deletionRequested(G1), 4),
        at(T4, deletionCompleted(4, T4), 5),
        at(T4, deletionRequested(G2), 6),
      )
      .when(at(T5, feedMoved(OLD, NEW, [G1, G2])))
      .thenOutcome(moved([G2])));

  it('leaves a subscription merged into another', () =>
    spec
      .given(
        subscribedToOld,
        at(T2, addRequested([{ feed_url: ELSEWHERE, guid: G3 }])),
        at(T3, updateRequested(G1, { new_guid: G3 })),
      )
      .when(at(T4, feedMoved(OLD, NEW, [G1])))
      .thenOutcome(moved([]))
      .thenNoChanges());

  it('refuses a new URL the /v1 rules refuse, and changes nothing', () =>
    spec
      .given(subscribedToOld)
      .when(at(T2, feedMoved(OLD, 'javascript:alert(1)', [G1], 'new-feed-url')))
      .thenOutcome(moved([], 'Unsupported protocol'))
      .thenNoChanges());

  it('changes nothing when the new URL is the old feed in another spelling', () =>
    spec
      .given(subscribedToOld)
      .when(at(T2, feedMoved(OLD, 'https://OLD.example/feed.xml#new', [G1], 'new-feed-url')))
      .thenOutcome(moved([]))
      .thenNoChanges());

  it('ignores a guid the user does not have', () =>
    spec
      .given(subscribedToOld)
      .when(at(T2, feedMoved(OLD, NEW, [G2, G1])))
      .thenOutcome(moved([G1])));
});
