import fc from 'fast-check';
import { UserId } from '../events/log-event';
import {
  addRequested,
  at,
  deciderSpec,
  deletionCompleted,
  deletionRequested,
  deviceUpdated,
  episodeAction,
  episodeActionsUploaded,
  G1,
  G2,
  G3,
  OTHER_USER,
  T1,
  T2,
  T3,
  T4,
  updateRequested,
  uploadRequested,
  USER,
} from '../testing';
import { batchesArbitrary, foldHistory, historyArbitrary, keysOfState } from '../testing/histories';
import { Draft } from './evolve';
import { normalizeFeedUrl } from './feed-url';
import { DomainInvariantError } from './invariant';
import { keysOf, reach } from './keys';
import { decide } from './subscription.decider';

const A = 'https://a.example/rss';
const B = 'https://b.example/rss';

const spec = deciderSpec();

const historyAndBatches = historyArbitrary().chain((history) =>
  fc.tuple(fc.constant(history), batchesArbitrary(history.length)),
);

describe('keysOf and reach: the state loaded for an event is enough to decide it', () => {
  it('decide on the state reached by keysOf(event) answers as on the whole state, never "is not loaded"', () =>
    fc.assert(
      fc.property(historyArbitrary(), (history) => {
        for (const { logged, now, before, decision } of foldHistory(history).steps) {
          expect(decide(reach(before, keysOf([logged.event])), logged, now)).toEqual(decision);
        }
      }),
      { numRuns: 200 },
    ));

  it('so does a batch: each user loaded once for the keys of all its events, then evolved event by event', () =>
    fc.assert(
      fc.property(historyAndBatches, ([history, cuts]) => {
        const { steps } = foldHistory(history);
        for (let b = 0; b + 1 < cuts.length; b++) {
          const batch = steps.slice(cuts[b], cuts[b + 1]);
          const keys = keysOf(batch.map((step) => step.logged.event));
          const loaded = new Map<UserId, Draft>();
          for (const { logged, now, before, decision } of batch) {
            const userId = logged.event.userId;
            const draft = loaded.get(userId) ?? new Draft(reach(before, keys));
            loaded.set(userId, draft);
            const decided = decide(draft.state, logged, now);
            expect(decided).toEqual(decision);
            draft.apply(decided.changes);
          }
        }
      }),
      { numRuns: 200 },
    ));

  it('reaching with every key of a state loads the whole state', () =>
    fc.assert(
      fc.property(historyArbitrary(), (history) => {
        for (const state of foldHistory(history).states.values()) {
          expect(reach(state, keysOfState(state))).toEqual(state);
        }
      }),
      { numRuns: 100 },
    ));
});

describe('keysOf reads an event as decide does', () => {
  it("an item's normalised feed_url and its guid in stored form; a failing item, or a guid that is no UUID, reaches nothing", () =>
    expect(
      keysOf([
        addRequested([
          { feed_url: 'HTTPS://A.example:443/rss#top', guid: G1.toUpperCase() },
          { feed_url: 'ftp://b.example/rss', guid: G2 },
          { feed_url: B, guid: 'not-a-guid' },
        ]),
      ]),
    ).toEqual({
      syncIds: [],
      actionIds: [],
      settingsScopes: [],
      users: new Set([USER]),
      guids: [[USER, G1]],
      feedUrls: [
        [USER, A],
        [USER, B],
      ],
      deletionIds: [],
      deviceIds: [],
      wholeUsers: new Set(),
    }));

  it("a PATCH's path guid, new_guid and normalised new_feed_url; a DELETE's guid; a saga result's deletion", () =>
    expect(
      keysOf([
        updateRequested(G1, { new_guid: G2.toUpperCase(), new_feed_url: 'https://B.example/rss#x' }),
        deletionRequested(G3, OTHER_USER),
        deletionCompleted(7, T1),
      ]),
    ).toEqual({
      syncIds: [],
      actionIds: [],
      settingsScopes: [],
      users: new Set([USER, OTHER_USER]),
      guids: [
        [USER, G1],
        [USER, G2],
        [OTHER_USER, G3],
      ],
      feedUrls: [[USER, normalizeFeedUrl('https://B.example/rss#x')]],
      deletionIds: [[USER, 7]],
      deviceIds: [],
      wholeUsers: new Set(),
    }));
});

describe('keysOf reads a gpodder.net request as decide does', () => {
  it("a device update's device", () =>
    expect(
      keysOf([deviceUpdated('phone', { caption: 'Phone' }), deviceUpdated('tv', {}, OTHER_USER)]),
    ).toEqual({
      syncIds: [],
      actionIds: [],
      settingsScopes: [],
      users: new Set([USER, OTHER_USER]),
      guids: [],
      feedUrls: [],
      deletionIds: [],
      deviceIds: [
        [USER, 'phone'],
        [OTHER_USER, 'tv'],
      ],
      wholeUsers: new Set(),
    }));

  it("an upload's device and the normalised URLs it adds and removes; a refused URL reaches nothing", () =>
    expect(
      keysOf([
        uploadRequested('phone', {
          add: ['HTTPS://A.example:443/rss#top', 'ftp://a.example/rss', 42],
          remove: ['https://B.example/rss#x', 'example.com/rss', null],
        }),
      ]),
    ).toEqual({
      syncIds: [],
      actionIds: [],
      settingsScopes: [],
      users: new Set([USER]),
      guids: [],
      feedUrls: [
        [USER, A],
        [USER, normalizeFeedUrl('https://B.example/rss#x')],
      ],
      deletionIds: [],
      deviceIds: [[USER, 'phone']],
      wholeUsers: new Set([USER]),
    }));

  it('an upload adding or removing a URL reaches its whole user: every subscription holding the URL now', () => {
    expect(keysOf([uploadRequested('phone', { remove: [B] })]).wholeUsers).toEqual(new Set([USER]));
    expect(keysOf([uploadRequested('phone', { add: [A] })]).wholeUsers).toEqual(new Set([USER]));
  });

  it('an upload whose every URL is refused reaches no whole user', () =>
    expect(
      keysOf([uploadRequested('tv', { add: ['ftp://a.example/rss'], remove: ['example.com/rss', 42] })])
        .wholeUsers,
    ).toEqual(new Set()));

  it('a replacing upload reaches its whole user, only its own', () => {
    const keys = keysOf([
      uploadRequested('phone', { add: [A], replace: true }),
      uploadRequested('tv', {}, OTHER_USER),
    ]);
    expect(keys.wholeUsers).toEqual(new Set([USER]));
    expect(keys.users).toEqual(new Set([USER, OTHER_USER]));
  });

  it('an added URL carrying a guid (the log admits one) reaches by that guid too, as a POST item does', () => {
    const event = uploadRequested('phone', { add: [B] });
    const withGuid = { ...event, add: event.add.map((item) => ({ ...item, guid: G1.toUpperCase() })) };
    expect(keysOf([withGuid]).guids).toEqual([[USER, G1]]);
  });

  it("episode actions' devices, each time an action names one; actions without a device reach none", () =>
    expect(
      keysOf([
        episodeActionsUploaded([
          episodeAction(A, 'e1', { device: 'phone' }),
          episodeAction(A, 'e2'),
          episodeAction(B, 'e3', { device: 'laptop' }),
        ]),
        episodeActionsUploaded([]),
      ]),
    ).toEqual({
      syncIds: [],
      actionIds: [],
      settingsScopes: [],
      users: new Set([USER]),
      guids: [],
      feedUrls: [],
      deletionIds: [],
      deviceIds: [
        [USER, 'phone'],
        [USER, 'laptop'],
      ],
      wholeUsers: new Set(),
    }));
});

describe('reach', () => {
  // G1 merged into G2, whose deletion 40 is pending.
  const merged = spec
    .given(
      at(T1, addRequested([{ feed_url: A, guid: G1 }])),
      at(T2, addRequested([{ feed_url: B, guid: G2 }])),
      at(T3, updateRequested(G1, { new_guid: G2 })),
    )
    .when(at(T4, deletionRequested(G2), 40));

  it('loads what a key names, what it is merged into, and the deletion attached, with their guids and feed_urls', () =>
    merged.thenDecision(({ after }) => {
      const reached = reach(after, keysOf([updateRequested(G1, { is_subscribed: false })]));
      expect([...reached.subscriptions.keys()].sort()).toEqual([G1, G2]);
      expect(reached.byGuid).toEqual(after.byGuid);
      expect(reached.byFeedUrl).toEqual(after.byFeedUrl);
      expect([...reached.deletions.keys()]).toEqual([40]);
      expect(reached.lastInstant).toBe(after.lastInstant);
    }));

  it("loads nothing for another user's keys, or for keys the user has not", () =>
    merged.thenDecision(({ after }) => {
      const reached = reach(after, keysOf([deletionRequested(G1, OTHER_USER), deletionRequested(G3)]));
      expect(reached.subscriptions.size).toBe(0);
      expect(reached.byGuid.size).toBe(0);
      expect(reached.deletions.size).toBe(0);
    }));

  it('is what decide needs: without the subscription a guid is merged into, it throws "is not loaded"', () =>
    merged.thenDecision(({ after, now }) => {
      const event = updateRequested(G1, { is_subscribed: false });
      const reached = reach(after, keysOf([event]));
      const subscriptions = new Map(reached.subscriptions);
      subscriptions.delete(G2);
      expect(() => decide({ ...reached, subscriptions }, { event, sequence: 50 }, now + 1)).toThrow(
        new DomainInvariantError(`subscription ${G2} of user ${USER} is not loaded`),
      );
    }));

  describe('of a gpodder.net user', () => {
    // Subscriptions A (G1) and B (G2), G3 merged into G2 and deleted; devices phone and tv.
    const user = spec
      .given(
        at(T1, addRequested([{ feed_url: A, guid: G1 }])),
        at(T1, addRequested([{ feed_url: B, guid: G2 }])),
        at(T2, addRequested([{ feed_url: 'https://c.example/rss', guid: G3 }])),
        at(T2, deviceUpdated('phone', { type: 'mobile' })),
        at(T2, deviceUpdated('tv')),
        at(T3, updateRequested(G3, { new_guid: G2 })),
      )
      .when(at(T4, deletionRequested(G2), 40));

    it('a replacing upload loads every subscription of the user, with the deletions attached', () =>
      user.thenDecision(({ after }) => {
        const reached = reach(after, keysOf([uploadRequested('phone', { replace: true })]));
        expect(reached.subscriptions).toEqual(after.subscriptions);
        expect(reached.byGuid).toEqual(after.byGuid);
        expect(reached.byFeedUrl).toEqual(after.byFeedUrl);
        expect([...reached.deletions.keys()]).toEqual([40]);
        expect([...reached.devices.keys()]).toEqual(['phone']);
      }));

    it('which is what it needs: without the whole user, the feeds no URL names would stay subscribed', () =>
      user.thenDecision(({ after, now }) => {
        const logged = { event: uploadRequested('phone', { add: [A], replace: true }), sequence: 50 };
        const keys = keysOf([logged.event]);
        const unsubscribed = (state: typeof after) =>
          decide(state, logged, now + 1).changes.flatMap((c) =>
            c.kind === 'SubscriptionSaved' && !c.subscription.isSubscribed ? [c.subscription.id] : [],
          );
        expect(unsubscribed(reach(after, keys))).toEqual([G2]);
        expect(unsubscribed(reach(after, { ...keys, wholeUsers: new Set() }))).toEqual([]);
      }));

    it("another user's replacing upload loads nothing of this user", () =>
      user.thenDecision(({ after }) => {
        const reached = reach(after, keysOf([uploadRequested('phone', { replace: true }, OTHER_USER)]));
        expect(reached.subscriptions.size).toBe(0);
        expect(reached.devices.size).toBe(0);
      }));

    it('loads the devices named, and no other; a device the user has not is absent', () =>
      user.thenDecision(({ after }) => {
        const reached = reach(
          after,
          keysOf([
            episodeActionsUploaded([
              episodeAction(A, 'e1', { device: 'tv' }),
              episodeAction(A, 'e1', { device: 'car' }),
            ]),
          ]),
        );
        expect(reached.devices).toEqual(new Map([['tv', after.devices.get('tv')]]));
        expect(reached.subscriptions.size).toBe(0);
      }));
  });
});
