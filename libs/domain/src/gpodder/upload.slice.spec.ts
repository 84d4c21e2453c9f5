// decideUpload: a gpodder.net subscription upload (GpodderUploadRequested): POST
// /api/2/subscriptions/{user}/{device}.json, and with `replace` the simple API's PUT, given any
// earlier events.
import {
  addRequested,
  at,
  candidateFor,
  deciderSpec,
  deletionCompleted,
  deletionRequested,
  device,
  deviceUpdated,
  G1,
  G2,
  G3,
  resolved,
  T1,
  T2,
  T3,
  T4,
  T5,
  updateRequested,
  uploaded,
  uploadRequested,
  USER,
} from '../testing';
import { Change } from '../subscriptions/change';
import { normalizeFeedUrl } from '../subscriptions/feed-url';
import { Instant } from '../time';
import { conflictingUrl } from './upload.slice';

const A = 'https://a.example/rss';
const B = 'https://b.example/rss';
const C = 'https://c.example/rss';
/** A in another spelling: the same feed after normalising. */
const A_SPELT = 'HTTPS://A.example:443/rss#top';

const spec = deciderSpec();
/** The device the uploads come from, used once already. */
const phone = at(T1, deviceUpdated('phone'));
/** The changes of an upload from the phone that changes no subscription: the phone's use, and the
 * clock with it. */
const onlyThePhoneUsed = (now: Instant): Change[] => [
  { kind: 'DeviceSaved', device: device('phone', now) },
  { kind: 'ClockAdvanced', userId: USER, lastInstant: now },
];
/** A as G1 and B as G2, created by one POST. */
const aAndB = at(
  T2,
  addRequested([
    { feed_url: A, guid: G1 },
    { feed_url: B, guid: G2 },
  ]),
);

describe('added URLs are POST items', () => {
  it('a URL that matches nothing creates a subscription with the guid the API drew', () =>
    spec
      .given(phone)
      .when(at(T2, uploadRequested('phone', { add: [A] })))
      .thenOutcome(uploaded([], T2))
      .thenState((s) => {
        expect(resolved(s, candidateFor(A))).toMatchObject({
          id: candidateFor(A),
          feedUrl: A,
          isSubscribed: true,
          subscriptionChanged: T2,
          deleted: null,
        });
        expect(s.byFeedUrl.get(normalizeFeedUrl(A))).toBe(candidateFor(A));
      }));

  it('a URL that matches an unsubscribed feed after normalising resubscribes it, keeps its spelling and reports it', () =>
    spec
      .given(
        phone,
        at(T2, addRequested([{ feed_url: A, guid: G1 }])),
        at(T2, updateRequested(G1, { is_subscribed: false })),
      )
      .when(at(T3, uploadRequested('phone', { add: [A_SPELT] })))
      .thenOutcome(uploaded([[A_SPELT, A]], T3))
      .thenState((s) => {
        expect(s.subscriptions.size).toBe(1);
        expect(resolved(s, G1)).toMatchObject({ feedUrl: A, isSubscribed: true, subscriptionChanged: T3 });
      }));

  it('http does not match https: another subscription, nothing reported', () =>
    spec
      .given(phone, at(T2, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T3, uploadRequested('phone', { add: ['http://a.example/rss'] })))
      .thenOutcome(uploaded([], T3))
      .thenState((s) => s.subscriptions.size === 2));

  it('reinstates an unsubscribed subscription: subscribed, subscription_changed now', () =>
    spec
      .given(
        phone,
        at(T2, addRequested([{ feed_url: A, guid: G1 }])),
        at(T3, updateRequested(G1, { is_subscribed: false })),
      )
      .when(at(T4, uploadRequested('phone', { add: [A] })))
      .thenOutcome(uploaded([], T4))
      .thenState((s) => {
        expect(resolved(s, G1)).toMatchObject({ isSubscribed: true, subscriptionChanged: T4 });
      }));

  it('reinstates a deleted subscription: deleted and its deletion cleared', () =>
    spec
      .given(
        phone,
        at(T2, addRequested([{ feed_url: A, guid: G1 }])),
        at(T3, deletionRequested(G1), 7),
        at(T4, deletionCompleted(7, T4)),
      )
      .when(at(T5, uploadRequested('phone', { add: [A_SPELT] })))
      .thenOutcome(uploaded([[A_SPELT, A]], T5))
      .thenState((s) => {
        expect(s.subscriptions.size).toBe(1);
        expect(resolved(s, G1)).toMatchObject({
          isSubscribed: true,
          deleted: null,
          deletionId: null,
          subscriptionChanged: T5,
        });
        expect(s.deletions.get(7)?.status).toBe('SUCCESS');
      }));

  it('lands on the subscription a URL of a merged one resolves to, which takes that URL as a POST does', () =>
    spec
      .given(phone, aAndB, at(T3, updateRequested(G1, { new_guid: G2 })))
      .when(at(T4, uploadRequested('phone', { add: [A] })))
      .thenOutcome(uploaded([], T4))
      .thenState((s) => {
        expect(s.subscriptions.size).toBe(2);
        expect(resolved(s, G2)).toMatchObject({ id: G2, feedUrl: A, subscriptionChanged: T4 });
      }));

  it('URLs of one upload that normalise alike end as one subscription, the later ones reported', () =>
    spec
      .given(phone)
      .when(at(T2, uploadRequested('phone', { add: [A, A_SPELT, B] })))
      .thenOutcome(uploaded([[A_SPELT, A]], T2))
      .thenState((s) => s.subscriptions.size === 2));

  it('an added URL of a feed subscribed already changes no subscription: only the device is used', () =>
    spec
      .given(phone, at(T2, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T3, uploadRequested('phone', { add: [A] })))
      .thenOutcome(uploaded([], T3))
      .thenChanges(...onlyThePhoneUsed(T3)));

  it('nor does one in another spelling, which is reported [sent, stored]', () =>
    spec
      .given(phone, at(T2, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T3, uploadRequested('phone', { add: [A_SPELT] })))
      .thenOutcome(uploaded([[A_SPELT, A]], T3))
      .thenChanges(...onlyThePhoneUsed(T3)));

  it('an added URL of a subscribed feed whose deletion is pending reinstates it, as a POST does', () =>
    spec
      .given(phone, at(T2, addRequested([{ feed_url: A, guid: G1 }])), at(T3, deletionRequested(G1)))
      .when(at(T4, uploadRequested('phone', { add: [A] })))
      .thenOutcome(uploaded([], T4))
      .thenState((s) => resolved(s, G1).deletionId === null && resolved(s, G1).subscriptionChanged === T4));
});

describe('refused URLs are reported [sent, ""] and change no subscription', () => {
  it('an ftp: URL, a URL without protocol and values that are no string, added or removed', () =>
    spec
      .given(phone)
      .when(
        at(
          T2,
          uploadRequested('phone', {
            add: ['ftp://a.example/rss', 'example.com/rss', 42, null],
            remove: ['gopher://b.example/', { href: B }],
          }),
        ),
      )
      .thenOutcome(
        uploaded(
          [
            ['ftp://a.example/rss', ''],
            ['example.com/rss', ''],
            ['42', ''],
            ['null', ''],
            ['gopher://b.example/', ''],
            [JSON.stringify({ href: B }), ''],
          ],
          T2,
        ),
      )
      .thenChanges(...onlyThePhoneUsed(T2))
      .thenState((s) => s.subscriptions.size === 0));

  it('beside accepted URLs, which are applied', () =>
    spec
      .given(phone)
      .when(at(T2, uploadRequested('phone', { add: ['ftp://a.example/rss', B] })))
      .thenOutcome(uploaded([['ftp://a.example/rss', '']], T2))
      .thenState((s) => s.subscriptions.size === 1 && resolved(s, candidateFor(B)).isSubscribed));

  it('an over-long URL is refused too', () => {
    const long = 'https://a.example/' + 'x'.repeat(2048);
    return spec
      .given(phone)
      .when(at(T2, uploadRequested('phone', { add: [long] })))
      .thenOutcome(uploaded([[long, '']], T2))
      .thenChanges(...onlyThePhoneUsed(T2));
  });
});

describe('removed URLs unsubscribe', () => {
  const subscribed = [phone, at(T2, addRequested([{ feed_url: A, guid: G1 }]))];

  it('a removed URL sets is_subscribed false with subscription_changed now: an unsubscribe, not a deletion', () =>
    spec
      .given(...subscribed)
      .when(at(T3, uploadRequested('phone', { remove: [A] })))
      .thenOutcome(uploaded([], T3))
      .thenChanges(
        { kind: 'DeviceSaved', device: device('phone', T3) },
        {
          kind: 'SubscriptionSaved',
          subscription: expect.objectContaining({
            id: G1,
            feedUrl: A,
            isSubscribed: false,
            subscriptionChanged: T3,
            deleted: null,
            deletionId: null,
          }),
        },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T3, syncClock: T3 * 1000 },
      )
      .thenState((s) => s.deletions.size === 0 && resolved(s, G1).guidChanged === null));

  it('a removed URL in another spelling unsubscribes the feed and is reported [sent, stored]', () =>
    spec
      .given(...subscribed)
      .when(at(T3, uploadRequested('phone', { remove: [A_SPELT] })))
      .thenOutcome(uploaded([[A_SPELT, A]], T3))
      .thenState((s) => resolved(s, G1).isSubscribed === false));

  it('a removed URL that nothing holds changes no subscription', () =>
    spec
      .given(...subscribed)
      .when(at(T3, uploadRequested('phone', { remove: [B] })))
      .thenOutcome(uploaded([], T3))
      .thenChanges(...onlyThePhoneUsed(T3)));

  it('a removed URL already unsubscribed changes no subscription', () =>
    spec
      .given(...subscribed, at(T3, updateRequested(G1, { is_subscribed: false })))
      .when(at(T4, uploadRequested('phone', { remove: [A] })))
      .thenOutcome(uploaded([], T4))
      .thenChanges(...onlyThePhoneUsed(T4)));

  it('a removed URL of a deleted subscription changes no subscription: it stays deleted', () =>
    spec
      .given(...subscribed, at(T3, deletionRequested(G1), 7), at(T4, deletionCompleted(7, T4)))
      .when(at(T5, uploadRequested('phone', { remove: [A] })))
      .thenOutcome(uploaded([], T5))
      .thenChanges(...onlyThePhoneUsed(T5)));

  it("an older URL of a feed the same upload adds does not unsubscribe it: the add's alias", () =>
    spec
      .given(...subscribed, at(T3, updateRequested(G1, { new_feed_url: B })))
      .when(at(T4, uploadRequested('phone', { add: [B], remove: [A] })))
      .thenOutcome(uploaded([], T4))
      .thenChanges(...onlyThePhoneUsed(T4)));

  describe('two subscriptions holding one URL', () => {
    // G1 moved to B by PATCH while G2 holds B: both are subscribed under B.
    const sharing = [phone, aAndB, at(T3, updateRequested(G1, { new_feed_url: B }))];

    it('a removed URL unsubscribes both: none of them is left under it', () =>
      spec
        .given(...sharing)
        .when(at(T4, uploadRequested('phone', { remove: [B] })))
        .thenOutcome(uploaded([], T4))
        .thenState((s) => {
          expect(resolved(s, G1)).toMatchObject({ feedUrl: B, isSubscribed: false, subscriptionChanged: T4 });
          expect(resolved(s, G2)).toMatchObject({ feedUrl: B, isSubscribed: false, subscriptionChanged: T4 });
        }));

    it("a removed older URL reaches only the feed that had it, not the other holder of the feed's URL", () =>
      spec
        .given(...sharing)
        .when(at(T4, uploadRequested('phone', { remove: [A] })))
        .thenOutcome(uploaded([[A, B]], T4))
        .thenState((s) => {
          expect(resolved(s, G1)).toMatchObject({ isSubscribed: false, subscriptionChanged: T4 });
          expect(resolved(s, G2)).toMatchObject({ isSubscribed: true });
        }));

    it('an added URL one of them holds subscribed changes no subscription, though the last to take it is unsubscribed', () =>
      spec
        .given(...sharing, at(T4, updateRequested(G1, { is_subscribed: false })))
        .when(at(T5, uploadRequested('phone', { add: [B] })))
        .thenOutcome(uploaded([], T5))
        .thenChanges(...onlyThePhoneUsed(T5)));

    it('nor does it bring back the last to take it when that one was deleted', () =>
      spec
        .given(...sharing, at(T4, deletionRequested(G1), 71), at(T4, deletionCompleted(71, T4)))
        .when(at(T5, uploadRequested('phone', { add: [B] })))
        .thenOutcome(uploaded([], T5))
        .thenChanges(...onlyThePhoneUsed(T5)));

    it('a replacing upload naming the URL keeps both subscribed', () =>
      spec
        .given(...sharing)
        .when(at(T4, uploadRequested('phone', { add: [B], replace: true })))
        .thenOutcome(uploaded([], T4))
        .thenChanges(...onlyThePhoneUsed(T4)));

    it('a replacing upload whose item naming the URL is refused (a guid that is no UUID, which only the log can carry) keeps neither', () => {
      const put = uploadRequested('phone', { add: [B], replace: true });
      const refused = { ...put, add: put.add.map((item) => ({ ...item, guid: 'not-a-uuid' })) };
      return spec
        .given(...sharing)
        .when(at(T4, refused))
        .thenOutcome(uploaded([[B, '']], T4))
        .thenState((s) => {
          expect(resolved(s, G1).isSubscribed).toBe(false);
          expect(resolved(s, G2).isSubscribed).toBe(false);
        });
    });

    it('the URL and an older spelling of one of them removed together unsubscribe each once', () =>
      spec
        .given(...sharing)
        .when(at(T4, uploadRequested('phone', { remove: [A, B] })))
        .thenOutcome(uploaded([[A, B]], T4))
        .thenChanges(
          { kind: 'DeviceSaved', device: device('phone', T4) },
          {
            kind: 'SubscriptionSaved',
            subscription: expect.objectContaining({ id: G1, isSubscribed: false }),
          },
          {
            kind: 'SubscriptionSaved',
            subscription: expect.objectContaining({ id: G2, isSubscribed: false }),
          },
          // Two subscriptions the sync face sees changed: two cursors, a microsecond apart.
          { kind: 'ClockAdvanced', userId: USER, lastInstant: T4, syncClock: T4 * 1000 + 1 },
        ));
  });

  it('adds and removes of one upload apply together', () =>
    spec
      .given(...subscribed)
      .when(at(T3, uploadRequested('phone', { add: [B], remove: [A] })))
      .thenOutcome(uploaded([], T3))
      .thenState((s) => {
        expect(resolved(s, G1)).toMatchObject({ isSubscribed: false, subscriptionChanged: T3 });
        expect(resolved(s, candidateFor(B))).toMatchObject({ isSubscribed: true, subscriptionChanged: T3 });
      }));
});

describe('a replacing upload (simple-API PUT)', () => {
  // A, B and C subscribed; D merged into C; E deleted; F unsubscribed.
  const D = 'https://d.example/rss';
  const E = 'https://e.example/rss';
  const F = 'https://f.example/rss';
  const [GD, GE, GF] = [candidateFor(D), candidateFor(E), candidateFor(F)];
  const everything = [
    phone,
    at(
      T2,
      addRequested([
        { feed_url: A, guid: G1 },
        { feed_url: B, guid: G2 },
        { feed_url: C, guid: G3 },
        { feed_url: D },
        { feed_url: E },
        { feed_url: F },
      ]),
    ),
    at(T2, updateRequested(GD, { new_guid: G3 })),
    at(T2, deletionRequested(GE), 70),
    at(T2, deletionCompleted(70, T2)),
    at(T2, updateRequested(GF, { is_subscribed: false })),
  ];

  it('unsubscribes every subscribed feed no added URL reaches, and leaves merged and deleted ones', () =>
    spec
      .given(...everything)
      .when(at(T3, uploadRequested('phone', { add: [A_SPELT, 'https://new.example/rss'], replace: true })))
      .thenOutcome(uploaded([[A_SPELT, A]], T3))
      .thenDecision(({ before, decision, after }) => {
        const saved = decision.changes.flatMap((c) =>
          c.kind === 'SubscriptionSaved' ? [c.subscription.id] : [],
        );
        expect(saved.sort()).toEqual([G2, G3, candidateFor('https://new.example/rss')].sort());
        // A is held subscribed already: named again, it is left as it was.
        expect(resolved(after, G1)).toMatchObject({ isSubscribed: true, subscriptionChanged: T2 });
        expect(resolved(after, G2)).toMatchObject({ isSubscribed: false, subscriptionChanged: T3 });
        expect(resolved(after, G3)).toMatchObject({ isSubscribed: false, subscriptionChanged: T3 });
        expect(resolved(after, candidateFor('https://new.example/rss')).isSubscribed).toBe(true);
        // The merged, deleted and unsubscribed ones are as they were.
        for (const id of [GD, GE, GF]) expect(after.subscriptions.get(id)).toBe(before.subscriptions.get(id));
      }));

  it('a replacing upload with nothing added unsubscribes every subscribed feed', () =>
    spec
      .given(...everything)
      .when(at(T3, uploadRequested('phone', { replace: true })))
      .thenOutcome(uploaded([], T3))
      .thenState((s) =>
        [...s.subscriptions.values()].every(
          (subscription) => !subscription.isSubscribed || subscription.mergedInto !== null,
        ),
      ));

  it('an added URL of a merged feed keeps the subscription it is merged into', () =>
    spec
      .given(...everything)
      .when(at(T3, uploadRequested('phone', { add: [D], replace: true })))
      .thenOutcome(uploaded([], T3))
      .thenState((s) => {
        expect(resolved(s, G3)).toMatchObject({ id: G3, feedUrl: D, isSubscribed: true });
        expect(resolved(s, G1).isSubscribed).toBe(false);
      }));

  it('reinstates a deleted feed it names', () =>
    spec
      .given(...everything)
      .when(at(T3, uploadRequested('phone', { add: [A, B, C, E], replace: true })))
      .thenState((s) => {
        expect(resolved(s, GE)).toMatchObject({ isSubscribed: true, deleted: null });
        expect([G1, G2, G3].map((g) => resolved(s, g).isSubscribed)).toEqual([true, true, true]);
      }));

  it('without replace, the feeds not named are left alone', () =>
    spec
      .given(...everything)
      .when(at(T3, uploadRequested('phone', { add: [A] })))
      .thenState((s) => resolved(s, G2).isSubscribed && resolved(s, G2).subscriptionChanged === T2));

  it('an empty replacing upload of a user with nothing subscribed changes no subscription', () =>
    spec
      .given(phone)
      .when(at(T2, uploadRequested('phone', { replace: true })))
      .thenOutcome(uploaded([], T2))
      .thenChanges(...onlyThePhoneUsed(T2)));
});

describe('the device', () => {
  it('an upload from a device not used yet creates it as an `other` without caption, used now', () =>
    spec
      .when(at(T1, uploadRequested('phone', { add: [A] })))
      .thenOutcome(uploaded([], T1))
      .thenDecision(({ decision, after }) => {
        expect(decision.changes[0]).toEqual({ kind: 'DeviceSaved', device: device('phone', T1) });
        expect(after.devices).toEqual(new Map([['phone', device('phone', T1)]]));
      }));

  it('so does an upload that changes nothing else: the device is a change, the clock is now', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(at(T2, uploadRequested('tablet', { remove: [B] })))
      .thenOutcome(uploaded([], T2))
      .thenChanges(
        { kind: 'DeviceSaved', device: device('tablet', T2) },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 },
      ));

  it('a device used before keeps its fields, and its last use is now', () =>
    spec
      .given(at(T1, deviceUpdated('phone', { caption: 'Phone', type: 'mobile' })))
      .when(at(T2, uploadRequested('phone', { add: [A] })))
      .thenDecision(({ decision, after }) => {
        expect(decision.changes.filter((c) => c.kind === 'DeviceSaved')).toEqual([
          { kind: 'DeviceSaved', device: device('phone', T2, 'Phone', 'mobile') },
        ]);
        expect(after.devices.get('phone')).toEqual(device('phone', T2, 'Phone', 'mobile'));
      }));

  it("moves only the uploading device's last use, not the user's other devices'", () =>
    spec
      .given(phone, at(T2, deviceUpdated('laptop')))
      .when(at(T3, uploadRequested('phone', {})))
      .thenState((s) => {
        expect(s.devices.get('phone')?.lastUsed).toBe(T3);
        expect(s.devices.get('laptop')?.lastUsed).toBe(T2);
      }));
});

describe("the outcome's clock", () => {
  it('is now when the upload changed something', () =>
    spec
      .given(phone)
      .when(at(T3, uploadRequested('phone', { add: [A] })))
      .thenOutcome(uploaded([], T3))
      .thenState((s) => s.lastInstant === T3));

  it("is now too when it changed no subscription: the device's use is a change", () =>
    spec
      .given(phone, at(T2, addRequested([{ feed_url: B, guid: G2 }])))
      .when(at(T4, uploadRequested('phone', {})))
      .thenOutcome(uploaded([], T4))
      .thenState((s) => s.lastInstant === T4));

  it('is raised past the last instant when the record time is earlier', () =>
    spec
      .given(at(T2, deviceUpdated('phone')))
      .when(at(T1, uploadRequested('phone', { add: [A] })))
      .thenOutcome(uploaded([], T2 + 1)));
});

describe('conflictingUrl: a URL both added and removed', () => {
  it('is none when the lists share no URL', () => {
    expect(conflictingUrl([A, B], [C])).toBeUndefined();
    expect(conflictingUrl([], [])).toBeUndefined();
    expect(conflictingUrl([A], ['http://a.example/rss'])).toBeUndefined();
  });

  it('is found after normalising, and answered as the remove list spells it', () => {
    expect(conflictingUrl([A], [A])).toBe(A);
    expect(conflictingUrl([A, B], [C, A_SPELT])).toBe(A_SPELT);
    expect(conflictingUrl(['http://C.example:80/feed'], ['http://c.example/feed#x'])).toBe(
      'http://c.example/feed#x',
    );
  });

  it('compares refused URLs as sent, values that are no string by their JSON text', () => {
    expect(conflictingUrl(['ftp://a.example/rss'], ['ftp://a.example/rss'])).toBe('ftp://a.example/rss');
    expect(conflictingUrl(['ftp://a.example/rss'], ['FTP://a.example/rss'])).toBeUndefined();
    expect(conflictingUrl([42], [42])).toBe('42');
  });
});
