import { DeviceId, Guid, UserId } from '../events/log-event';
import { SyncId } from '../sync/ids';
import { Instant, Micros } from '../time';
import { Change } from './change';
import { DomainInvariantError } from './invariant';
import { Deletion, Device, ScopeSettings, SeenAction, Subscription, UserSubscriptions } from './subscription';

export const initialState = (userId: UserId, lastInstant: Instant = 0): UserSubscriptions => ({
  userId,
  lastInstant,
  subscriptions: new Map(),
  byGuid: new Map(),
  byFeedUrl: new Map(),
  deletions: new Map(),
  devices: new Map(),
  syncClock: 0,
  bySyncId: new Map(),
  seenActions: new Map(),
  settings: new Map(),
});

/** The one way changes are applied: a working copy of a state, copying each map the first time a
 * change touches it, so a request of many items (or a batch of many requests) costs one copy per
 * map, not one per change. `state` answers the current value without copying; a state it answered
 * is valid until the next `apply`, which may change the maps it shares. `state` itself, the one the
 * draft started from, is never modified. */
export class Draft {
  private lastInstant: Instant;
  private subscriptions?: Map<Guid, Subscription>;
  private byGuid?: Map<Guid, Guid>;
  private byFeedUrl?: Map<string, Guid>;
  private deletions?: Map<number, Deletion>;
  private devices?: Map<DeviceId, Device>;
  private syncClock: Micros;
  private bySyncId?: Map<SyncId, Guid>;
  private seenActions?: Map<string, SeenAction>;
  private settings?: Map<string, ScopeSettings>;
  /** The last state answered, until the next `apply`. */
  private current?: UserSubscriptions;

  constructor(private readonly base: UserSubscriptions) {
    this.lastInstant = base.lastInstant;
    this.syncClock = base.syncClock;
  }

  /** Each kind touches exactly what it names, as its SQL statement does: SubscriptionSaved the row
   * (and `bySyncId`, whose key is on the row and never changes), GuidRecorded `byGuid`,
   * FeedUrlRecorded `byFeedUrl`, DeletionSaved the deletion, ClockAdvanced the clocks (never
   * lowered), DeviceSaved the device, ActionSeen the seen action, SettingsSaved the scope's
   * settings; EpisodeActionsRecorded nothing.
   * `decide` emits the index changes beside the rows, which keeps the maps consistent with them. */
  apply(changes: readonly Change[]): this {
    this.current = undefined;
    for (const change of changes) {
      switch (change.kind) {
        case 'SubscriptionSaved':
          (this.subscriptions ??= new Map(this.base.subscriptions)).set(
            change.subscription.id,
            change.subscription,
          );
          if (!(this.bySyncId ?? this.base.bySyncId).has(change.subscription.syncId))
            (this.bySyncId ??= new Map(this.base.bySyncId)).set(
              change.subscription.syncId,
              change.subscription.id,
            );
          break;
        case 'GuidRecorded':
          (this.byGuid ??= new Map(this.base.byGuid)).set(change.guid, change.subscriptionId);
          break;
        case 'FeedUrlRecorded':
          (this.byFeedUrl ??= new Map(this.base.byFeedUrl)).set(
            change.normalizedFeedUrl,
            change.subscriptionId,
          );
          break;
        case 'DeletionSaved':
          (this.deletions ??= new Map(this.base.deletions)).set(change.deletion.deletionId, change.deletion);
          break;
        case 'ClockAdvanced':
          this.lastInstant = Math.max(this.lastInstant, change.lastInstant);
          this.syncClock = Math.max(this.syncClock, change.syncClock ?? 0);
          break;
        case 'ActionSeen':
          (this.seenActions ??= new Map(this.base.seenActions)).set(change.action.actionId, change.action);
          break;
        case 'DeviceSaved':
          (this.devices ??= new Map(this.base.devices)).set(change.device.id, change.device);
          break;
        case 'SettingsSaved':
          (this.settings ??= new Map(this.base.settings)).set(change.settings.scopeId, change.settings);
          break;
        case 'EpisodeActionsRecorded':
          // Written to the read model only: no decision reads episode actions back.
          break;
        default: {
          const unexpected: never = change;
          throw new DomainInvariantError(`unknown change ${JSON.stringify(unexpected)}`);
        }
      }
    }
    return this;
  }

  get state(): UserSubscriptions {
    // Written out rather than spread from `base`: states come in several shapes (initial, loaded,
    // drafted), and a spread over them took V8's slow generic copy, a quarter of a decision's time.
    return (this.current ??= {
      userId: this.base.userId,
      lastInstant: this.lastInstant,
      subscriptions: this.subscriptions ?? this.base.subscriptions,
      byGuid: this.byGuid ?? this.base.byGuid,
      byFeedUrl: this.byFeedUrl ?? this.base.byFeedUrl,
      deletions: this.deletions ?? this.base.deletions,
      devices: this.devices ?? this.base.devices,
      syncClock: this.syncClock,
      bySyncId: this.bySyncId ?? this.base.bySyncId,
      seenActions: this.seenActions ?? this.base.seenActions,
      settings: this.settings ?? this.base.settings,
    });
  }
}

/** The decider's evolve: one change applied through a draft; `state` is never modified. */
export const evolve = (state: UserSubscriptions, change: Change): UserSubscriptions =>
  new Draft(state).apply([change]).state;
