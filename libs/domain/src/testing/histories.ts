import fc from 'fast-check';
import {
  AddItem,
  DEVICE_TYPES,
  DeviceType,
  EPISODE_ACTION_KINDS,
  EpisodeAction,
  EpisodeActionKind,
  FEED_MOVE_CAUSES,
  FeedMoveCause,
  Guid,
  SettingsScope,
  LoggedEvent,
  LogEvent,
  UserId,
} from '../events/log-event';
import { conflictingUrl } from '../gpodder/upload.slice';
import { Decision } from '../subscriptions/decision';
import { Draft, initialState } from '../subscriptions/evolve';
import { normalizeFeedUrl, normalizeGuid } from '../subscriptions/feed-url';
import { BatchKeys } from '../subscriptions/keys';
import { UserSubscriptions } from '../subscriptions/subscription';
import { decide } from '../subscriptions/subscription.decider';
import { Instant, microsOf, nextInstant, toIsoMicros } from '../time';
import { G1, G2, G3, G4, G5, G6, OTHER_USER, T0, USER } from './builders';

/** One event of a generated history: logged at `sequence`, its record appended at `recordTime`. */
export interface HistoryEvent {
  readonly logged: LoggedEvent;
  readonly recordTime: Instant;
}

/** A few guids and feed_urls, so that generated requests keep meeting each other: the same feed
 * spelt differently, a path that differs, http beside https, feed_urls that fail. */
const GUIDS: readonly Guid[] = [G1, G2, G3, G4, G5, G6];
const VALID_FEEDS = [
  'https://a.example/rss',
  'HTTPS://A.example:443/rss#top',
  'https://a.example/rss2',
  'http://a.example/rss',
  'https://b.example/rss',
  'https://B.EXAMPLE/rss',
  'http://c.example/feed',
  'http://C.example:80/feed#x',
];
const INVALID_FEEDS: readonly unknown[] = ['ftp://a.example/rss', 'example.com/rss', '', 42, null, undefined];
/** A few device ids of the gpodder.net face (ids are case-sensitive). */
const DEVICES = ['phone', 'Phone', 'laptop', 'tv.1'];

/** A guid as a request names it: one of the few, possibly upper-cased; one the API drew for an
 * earlier item of anyone (the n-th, modulo those drawn so far); or, mostly, one the user has (the
 * n-th of their guids, most recent first). */
type GuidRef = { readonly fixed: Guid } | { readonly drawn: number } | { readonly mine: number };

type Planned =
  | {
      readonly type: 'add';
      readonly items: readonly {
        readonly feedUrl: unknown;
        readonly guid?: GuidRef | { invalid: unknown };
      }[];
    }
  | {
      readonly type: 'update';
      readonly guid: GuidRef;
      readonly newGuid?: GuidRef;
      readonly newFeedUrl?: string;
      readonly isSubscribed?: boolean;
    }
  | { readonly type: 'delete'; readonly guid: GuidRef }
  /** A saga result for one of the user's deletions (pending ones first), or for one that does not
   * exist. */
  | { readonly type: 'completed' | 'failed'; readonly pick: number; readonly unknown: boolean }
  | {
      readonly type: 'device';
      readonly deviceId: string;
      readonly caption?: string;
      readonly deviceType?: DeviceType;
    }
  /** A gpodder.net upload. Its added URLs are items (a guid among them only as the log's schema
   * allows, never drawn by the API); removed URLs that an added one names are dropped, as the API
   * refuses such an upload. */
  | {
      readonly type: 'upload';
      readonly deviceId: string;
      readonly add: readonly { readonly feedUrl: unknown; readonly guid?: GuidRef }[];
      readonly remove: readonly unknown[];
      readonly replace: boolean;
    }
  /** A sync request: actions on the user's entities (the n-th sync_id) or unknown ones, at client
   * times around the record's, some reusing an earlier action_id, some malformed. */
  | {
      readonly type: 'sync';
      readonly clientId: string;
      readonly actions: readonly {
        readonly action: 'subscribe' | 'unsubscribe' | 'update' | 'malformed';
        readonly feedUrl?: unknown;
        readonly guid?: GuidRef;
        readonly syncId: number;
        /** Client time relative to the record time, in microseconds. */
        readonly occurredAfter: number;
        /** The n-th action_id sent so far, or a new one. */
        readonly reuse: number | undefined;
      }[];
    }
  /** A feed move as the resolver appends it: of one of the feeds, naming some of the user's
   * subscriptions (whether or not they still hold it) and sometimes an unknown guid, to a valid
   * feed or (a hostile publisher) an invalid one. */
  | {
      readonly type: 'moved';
      readonly feedUrl: string;
      readonly newFeedUrl: unknown;
      readonly guids: readonly GuidRef[];
      readonly cause: FeedMoveCause;
    }
  /** A settings change in one of a few scopes (a device scope among the devices above), with a few
   * keys and values of every JSON kind; sometimes one key set and removed, or more keys than a
   * scope may hold. */
  | {
      readonly type: 'settings';
      readonly scope: SettingsScope;
      readonly set: readonly (readonly [string, unknown])[];
      readonly remove: readonly string[];
      readonly many: boolean;
    }
  | {
      readonly type: 'actions';
      readonly actions: readonly {
        readonly podcast: string;
        readonly episode: string;
        readonly action: EpisodeActionKind;
        readonly device?: string;
        readonly timestamp?: string;
      }[];
    };

const guidRef: fc.Arbitrary<GuidRef> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.constantFrom(...GUIDS, G1.toUpperCase(), G2.toUpperCase()).map((guid) => ({ fixed: guid })),
  },
  { weight: 1, arbitrary: fc.nat(40).map((n) => ({ drawn: n })) },
  { weight: 4, arbitrary: fc.nat(6).map((n) => ({ mine: n })) },
);

/** A feed_url as a request sends it: mostly one of the valid few, sometimes one that fails. */
const feedUrlArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom<unknown>(...VALID_FEEDS) },
  { weight: 1, arbitrary: fc.constantFrom(...INVALID_FEEDS) },
);

const CLIENTS = [
  'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
  'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb',
  'cccccccc-cccc-4ccc-8ccc-cccccccccccc',
];

const syncPlan: fc.Arbitrary<Planned> = fc.record({
  type: fc.constant('sync' as const),
  clientId: fc.constantFrom(...CLIENTS),
  actions: fc.array(
    fc.record(
      {
        action: fc.oneof(
          {
            weight: 8,
            arbitrary: fc.constantFrom('subscribe' as const, 'unsubscribe' as const, 'update' as const),
          },
          { weight: 1, arbitrary: fc.constant('malformed' as const) },
        ),
        feedUrl: feedUrlArbitrary,
        guid: guidRef,
        syncId: fc.nat(6),
        // From ten minutes before the record to 65 minutes after it: a few are refused as ahead.
        occurredAfter: fc.integer({ min: -600_000_000, max: 3_900_000_000 }),
        reuse: fc.oneof(
          { weight: 5, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: fc.nat(20) },
        ),
      },
      { requiredKeys: ['action', 'syncId', 'occurredAfter', 'reuse'] },
    ),
    { minLength: 1, maxLength: 4 },
  ),
});

/** A few settings scopes, keys and values: requests keep meeting each other's keys. */
const SCOPES: readonly SettingsScope[] = [
  { kind: 'account' },
  ...DEVICES.slice(0, 2).map((deviceId): SettingsScope => ({ kind: 'device', deviceId })),
  { kind: 'podcast', podcast: VALID_FEEDS[0] as string },
  { kind: 'podcast', podcast: VALID_FEEDS[1] as string },
  { kind: 'episode', podcast: VALID_FEEDS[0] as string, episode: 'https://a.example/e1.mp3' },
];
const SETTING_KEYS = ['public_subscriptions', 'auto_flattr', 'is_favorite', 'x', '10', 'ü'];
const settingValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(true, false, null, 0, 1.5, '', 'on', [], {}),
  fc.constantFrom<unknown>({ a: 1, b: [2, { c: 'd' }] }, { b: [2, { c: 'd' }], a: 1 }, [1, 'two', null]),
);

const settingsPlan: fc.Arbitrary<Planned> = fc.record({
  type: fc.constant('settings' as const),
  scope: fc.constantFrom(...SCOPES),
  set: fc.array(fc.tuple(fc.constantFrom(...SETTING_KEYS), settingValue), { maxLength: 3 }),
  remove: fc.array(fc.constantFrom(...SETTING_KEYS), { maxLength: 2 }),
  many: fc.nat(9).map((n) => n === 0),
});

const planned: fc.Arbitrary<Planned> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('add' as const),
      items: fc.array(
        fc.record(
          {
            feedUrl: feedUrlArbitrary,
            guid: fc.oneof(
              { weight: 4, arbitrary: guidRef },
              {
                weight: 1,
                arbitrary: fc.constantFrom('not-a-guid', 42, null).map((invalid) => ({ invalid })),
              },
            ),
          },
          { requiredKeys: ['feedUrl'] },
        ),
        { minLength: 1, maxLength: 4 },
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record(
      {
        type: fc.constant('update' as const),
        guid: guidRef,
        newGuid: guidRef,
        newFeedUrl: fc.constantFrom(...VALID_FEEDS),
        isSubscribed: fc.boolean(),
      },
      { requiredKeys: ['type', 'guid'] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('delete' as const), guid: guidRef }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constantFrom('completed' as const, 'failed' as const),
      pick: fc.nat(3),
      unknown: fc.nat(4).map((n) => n === 0),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        type: fc.constant('device' as const),
        deviceId: fc.constantFrom(...DEVICES),
        caption: fc.constantFrom('', 'Phone', 'Work laptop'),
        deviceType: fc.constantFrom(...DEVICE_TYPES),
      },
      { requiredKeys: ['type', 'deviceId'] },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('upload' as const),
      deviceId: fc.constantFrom(...DEVICES),
      add: fc.array(
        fc.record(
          {
            feedUrl: feedUrlArbitrary,
            guid: fc.oneof(
              { weight: 4, arbitrary: fc.constant(undefined) },
              { weight: 1, arbitrary: guidRef },
            ),
          },
          { requiredKeys: ['feedUrl'] },
        ),
        { maxLength: 4 },
      ),
      remove: fc.array(feedUrlArbitrary, { maxLength: 3 }),
      replace: fc.nat(3).map((n) => n === 0),
    }),
  },
  { weight: 4, arbitrary: syncPlan },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('moved' as const),
      feedUrl: fc.constantFrom(...VALID_FEEDS),
      newFeedUrl: feedUrlArbitrary,
      guids: fc.array(guidRef, { minLength: 1, maxLength: 3 }),
      cause: fc.constantFrom(...FEED_MOVE_CAUSES),
    }),
  },
  { weight: 2, arbitrary: settingsPlan },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('actions' as const),
      actions: fc.array(
        fc.record(
          {
            podcast: fc.constantFrom(...VALID_FEEDS.slice(0, 3)),
            episode: fc.constantFrom('https://a.example/e1.mp3', 'https://a.example/e2.mp3'),
            action: fc.constantFrom(...EPISODE_ACTION_KINDS),
            device: fc.constantFrom(...DEVICES),
            timestamp: fc.constantFrom('2023-02-23T13:00:00', '2023-02-23T14:30:00'),
          },
          { requiredKeys: ['podcast', 'episode', 'action'] },
        ),
        { maxLength: 3 },
      ),
    }),
  },
);

/** Deletion ids that name no deletion: above every sequence a generated history uses. */
const UNKNOWN_DELETION = 1_000_000;

/** A history of `users`' requests (of both faces) and saga results in log order, each event logged at its 1-based
 * position. Every item carries a candidate guid of its own, as the API draws them; requests mostly
 * name guids and deletions the user has (the history is folded as it is drawn), and sometimes
 * others. Record times go back as well as forward. */
export const historyArbitrary = (
  options: { users?: readonly UserId[]; maxLength?: number } = {},
): fc.Arbitrary<HistoryEvent[]> => {
  const users = options.users ?? [USER, OTHER_USER];
  return fc
    .array(
      fc.record({
        user: fc.constantFrom(...users),
        after: fc.integer({ min: -120_000, max: 600_000 }),
        planned,
      }),
      { minLength: 1, maxLength: options.maxLength ?? 30, size: 'max' },
    )
    .map((plans) => {
      const drawn: Guid[] = [];
      const sentActionIds: string[] = [];
      const states = new Map<UserId, UserSubscriptions>();
      const stateOf = (user: UserId): UserSubscriptions => states.get(user) ?? initialState(user);
      const nth = <T>(values: readonly T[], n: number): T | undefined =>
        values[values.length - 1 - (n % Math.max(values.length, 1))];
      const resolve = (user: UserId, ref: GuidRef): Guid => {
        if ('fixed' in ref) return ref.fixed;
        if ('drawn' in ref) return drawn[ref.drawn % Math.max(drawn.length, 1)] ?? G6;
        return nth([...stateOf(user).byGuid.keys()], ref.mine) ?? (GUIDS[ref.mine % GUIDS.length] as Guid);
      };
      let recordTime = T0;
      return plans.map(({ user, after, planned: plan }, index): HistoryEvent => {
        recordTime += after;
        const event = ((): LogEvent => {
          switch (plan.type) {
            case 'add': {
              const items = plan.items.map((item, i): AddItem => {
                const guid =
                  item.guid === undefined
                    ? {}
                    : { guid: 'invalid' in item.guid ? item.guid.invalid : resolve(user, item.guid) };
                return { feedUrl: item.feedUrl, ...guid, candidateGuid: candidate(drawn.length + i) };
              });
              drawn.push(...items.map((item) => item.candidateGuid));
              return { type: 'SubscriptionsAddRequested', userId: user, items };
            }
            case 'update':
              return {
                type: 'SubscriptionUpdateRequested',
                userId: user,
                guid: resolve(user, plan.guid),
                ...(plan.newGuid !== undefined ? { newGuid: resolve(user, plan.newGuid) } : {}),
                ...(plan.newFeedUrl !== undefined ? { newFeedUrl: plan.newFeedUrl } : {}),
                ...(plan.isSubscribed !== undefined ? { isSubscribed: plan.isSubscribed } : {}),
              };
            case 'delete':
              return { type: 'DeletionRequested', userId: user, guid: resolve(user, plan.guid) };
            case 'completed':
            case 'failed': {
              const byStatus = [...stateOf(user).deletions.values()].sort(
                (a, b) => Number(a.status === 'PENDING') - Number(b.status === 'PENDING'),
              );
              const deletionId = plan.unknown
                ? UNKNOWN_DELETION + plan.pick
                : (nth(byStatus, plan.pick)?.deletionId ?? UNKNOWN_DELETION + plan.pick);
              return plan.type === 'completed'
                ? { type: 'DeletionCompleted', userId: user, deletionId, deletedAt: recordTime }
                : { type: 'DeletionFailed', userId: user, deletionId, reason: 'rolled back' };
            }
            case 'device':
              return {
                type: 'DeviceUpdateRequested',
                userId: user,
                deviceId: plan.deviceId,
                ...(plan.caption !== undefined ? { caption: plan.caption } : {}),
                ...(plan.deviceType !== undefined ? { deviceType: plan.deviceType } : {}),
              };
            case 'upload': {
              const add = plan.add.map((item, i): AddItem => ({
                feedUrl: item.feedUrl,
                ...(item.guid !== undefined ? { guid: resolve(user, item.guid) } : {}),
                candidateGuid: candidate(drawn.length + i),
              }));
              drawn.push(...add.map((item) => item.candidateGuid));
              const urls = add.map((item) => item.feedUrl);
              return {
                type: 'GpodderUploadRequested',
                userId: user,
                deviceId: plan.deviceId,
                add,
                remove: plan.remove.filter((url) => conflictingUrl(urls, [url]) === undefined),
                ...(plan.replace ? { replace: true } : {}),
              };
            }
            case 'sync':
              return syncEvent(user, plan, recordTime, {
                syncIds: [...stateOf(user).bySyncId.keys()],
                guidOf: (ref) => resolve(user, ref),
                actionIds: sentActionIds,
              });
            case 'moved':
              return {
                type: 'FeedMoved',
                userId: user,
                feedUrl: normalizeFeedUrl(plan.feedUrl),
                newFeedUrl: typeof plan.newFeedUrl === 'string' ? plan.newFeedUrl : String(plan.newFeedUrl),
                cause: plan.cause,
                guids: plan.guids.map((ref) => normalizeGuid(resolve(user, ref))),
              };
            case 'actions':
              return {
                type: 'EpisodeActionsUploaded',
                userId: user,
                actions: plan.actions.map((action): EpisodeAction => ({ ...action })),
              };
            case 'settings':
              return settingsEvent(user, plan);
          }
        })();
        const logged: LoggedEvent = { event, sequence: index + 1 };
        const before = stateOf(user);
        const decision = decide(before, logged, nextInstant(recordTime, before.lastInstant));
        states.set(user, new Draft(before).apply(decision.changes).state);
        return { logged, recordTime };
      });
    });
};

/** The sync request `plan` describes, for `user` at `recordTime`; each new action_id joins
 * `actionIds`. */
const syncEvent = (
  user: UserId,
  plan: Extract<Planned, { type: 'sync' }>,
  recordTime: Instant,
  refs: { syncIds: readonly string[]; guidOf: (ref: GuidRef) => Guid; actionIds: string[] },
): LogEvent => {
  const actions = plan.actions.map((planned) => {
    const reused = planned.reuse === undefined ? undefined : refs.actionIds[planned.reuse];
    const actionId = reused ?? candidate(0x100000 + refs.actionIds.length);
    if (reused === undefined) refs.actionIds.push(actionId);
    const syncId =
      refs.syncIds[planned.syncId % Math.max(refs.syncIds.length, 1)] ?? candidate(0x200000 + planned.syncId);
    const occurredAt = toIsoMicros(Math.max(0, microsOf(recordTime) + planned.occurredAfter));
    const guid = planned.guid === undefined ? {} : { guid: refs.guidOf(planned.guid) };
    const feedUrl = planned.feedUrl === undefined ? {} : { feed_url: planned.feedUrl };
    const data =
      planned.action === 'subscribe'
        ? { ...feedUrl, ...guid }
        : planned.action === 'update'
          ? { sync_id: syncId, ...feedUrl, ...guid }
          : { sync_id: syncId };
    if (planned.action === 'malformed')
      return { type: 'subscription', action: 'subscribe', action_id: actionId };
    return {
      type: 'subscription',
      action: planned.action,
      action_id: actionId,
      occurred_at: occurredAt,
      data,
    };
  });
  return { type: 'SyncActionsPosted', userId: user, clientId: plan.clientId, actions };
};

/** The settings change `plan` describes, for `user`; with `many`, 60 keys more, so that two such
 * changes in one scope are one too many. */
const settingsEvent = (user: UserId, plan: Extract<Planned, { type: 'settings' }>): LogEvent => {
  const many = plan.many ? Array.from({ length: 60 }, (_, i) => [`k${i}`, i] as const) : [];
  return {
    type: 'SettingsUpdateRequested',
    userId: user,
    scope: plan.scope,
    set: Object.fromEntries([...plan.set, ...many]),
    remove: plan.remove,
  };
};

/** The n-th candidate guid of a history: a UUID no fixed guid and no other candidate equals. */
const candidate = (n: number): Guid => `cccccccc-cccc-4ccc-8ccc-${n.toString(16).padStart(12, '0')}`;

/** Cut points that split a history of `length` events into consecutive batches, as the log hands
 * them over. */
export const batchesArbitrary = (length: number): fc.Arbitrary<number[]> =>
  fc
    .uniqueArray(fc.integer({ min: 1, max: Math.max(1, length - 1) }), { maxLength: Math.max(0, length - 1) })
    .map((cuts) => [...new Set([0, ...cuts.filter((cut) => cut < length), length])].sort((a, b) => a - b));

/** One event decided as the projector decides it. */
export interface Step {
  readonly logged: LoggedEvent;
  readonly now: Instant;
  /** The user's whole state before the event. */
  readonly before: UserSubscriptions;
  readonly decision: Decision;
}

/** Folds a history over each user's whole state, from the initial one. */
export function foldHistory(history: readonly HistoryEvent[]): {
  readonly steps: Step[];
  readonly states: Map<UserId, UserSubscriptions>;
} {
  const states = new Map<UserId, UserSubscriptions>();
  const steps = history.map(({ logged, recordTime }): Step => {
    const userId = logged.event.userId;
    const before = states.get(userId) ?? initialState(userId);
    const now = nextInstant(recordTime, before.lastInstant);
    const decision = decide(before, logged, now);
    states.set(userId, new Draft(before).apply(decision.changes).state);
    return { logged, now, before, decision };
  });
  return { steps, states };
}

/** Every key of a user's state: reaching with them loads the whole state. */
export const keysOfState = (state: UserSubscriptions): BatchKeys => ({
  users: new Set([state.userId]),
  guids: [...state.byGuid.keys()].map((guid) => [state.userId, guid] as const),
  feedUrls: [...state.byFeedUrl.keys()].map((url) => [state.userId, url] as const),
  deletionIds: [...state.deletions.keys()].map((id) => [state.userId, id] as const),
  deviceIds: [...state.devices.keys()].map((id) => [state.userId, id] as const),
  syncIds: [...state.bySyncId.keys()].map((id) => [state.userId, id] as const),
  actionIds: [...state.seenActions.keys()].map((id) => [state.userId, id] as const),
  settingsScopes: [...state.settings.keys()].map((id) => [state.userId, id] as const),
  wholeUsers: new Set(),
});

/** The same history for other users, logged `offset` positions later: the deletion ids it yields
 * and names move with it (unknown ones too), so it decides the same. */
export const relabel = (
  history: readonly HistoryEvent[],
  userOf: (userId: UserId) => UserId,
  offset: number,
): HistoryEvent[] =>
  history.map(({ logged: { event, sequence }, recordTime }) => {
    const moved = { ...event, userId: userOf(event.userId) } as LogEvent;
    const renamed: LogEvent =
      moved.type === 'DeletionCompleted' || moved.type === 'DeletionFailed'
        ? { ...moved, deletionId: moved.deletionId + offset }
        : moved;
    return { logged: { event: renamed, sequence: sequence + offset }, recordTime };
  });
