import { AddItem, DeviceId, GpodderUploadRequested, Guid, LogEvent, UserId } from '../events/log-event';
import { checkFeedUrl, isGuid, normalizeFeedUrl, normalizeGuid } from './feed-url';
import { DomainInvariantError } from './invariant';
import { settingsScopeIdOf } from '../gpodder/settings';
import { podcastGuidOf } from '../sync/ids';
import { isObject } from '../sync/sync-action';
import { Deletion, Device, ScopeSettings, SeenAction, Subscription, UserSubscriptions } from './subscription';

/** What events can reach, each key with its user: guids (stored form), normalised feed_urls,
 * deletion ids, devices, a sync request's sync_ids and action_ids, and settings scopes. */
export interface BatchKeys {
  readonly users: ReadonlySet<UserId>;
  readonly guids: readonly (readonly [UserId, Guid])[];
  readonly feedUrls: readonly (readonly [UserId, string])[];
  readonly deletionIds: readonly (readonly [UserId, number])[];
  readonly deviceIds: readonly (readonly [UserId, DeviceId])[];
  /** sync_ids (stored form) and sync action ids (stored form) a sync request names. */
  readonly syncIds: readonly (readonly [UserId, string])[];
  readonly actionIds: readonly (readonly [UserId, string])[];
  /** The ids of the settings scopes a settings change names (`settingsScopeIdOf`). */
  readonly settingsScopes: readonly (readonly [UserId, string])[];
  /** Users whose every subscription an event can reach (a gpodder.net upload that adds or removes a
   * URL, or replaces the set). */
  readonly wholeUsers: ReadonlySet<UserId>;
}

/** The keys `decide` looks the events up by, read the way `decide` reads them: an item's guid when
 * it is a UUID and its feed_url passes (an item failing its feed_url reaches nothing), the checked
 * feed_url's normalised form, a PATCH's path guid, new_guid and normalised new_feed_url, a DELETE's
 * guid, a feed move's subscriptions and new feed_url, the deletion a saga result names, the devices a gpodder.net request names, the URLs it
 * adds or removes (as items), and for an upload that adds or removes a URL or replaces the set the
 * whole user; a settings change's scope (and its device, for a device scope).
 * Only UUIDs are guid keys: no other guid is stored.
 * Loading `reach(state, keysOf(events))` for each user is enough for `decide` on those events,
 * whatever the batch holds (keys.spec.ts). */
export function keysOf(events: readonly LogEvent[]): BatchKeys {
  const keys = new KeyCollector();
  for (const event of events) keys.collect(event);
  return keys;
}

/** Gathers the keys of one batch's events, event by event. */
class KeyCollector implements BatchKeys {
  readonly users = new Set<UserId>();
  readonly guids: [UserId, Guid][] = [];
  readonly feedUrls: [UserId, string][] = [];
  readonly deletionIds: [UserId, number][] = [];
  readonly deviceIds: [UserId, DeviceId][] = [];
  readonly syncIds: [UserId, string][] = [];
  readonly actionIds: [UserId, string][] = [];
  readonly settingsScopes: [UserId, string][] = [];
  readonly wholeUsers = new Set<UserId>();

  collect(event: LogEvent): void {
    const { userId } = event;
    this.users.add(userId);
    switch (event.type) {
      case 'SubscriptionsAddRequested':
        for (const added of event.items) this.item(userId, added);
        break;
      case 'SubscriptionUpdateRequested':
        this.guid(userId, event.guid);
        this.guid(userId, event.newGuid);
        if (event.newFeedUrl !== undefined) this.feedUrls.push([userId, normalizeFeedUrl(event.newFeedUrl)]);
        break;
      case 'DeletionRequested':
        this.guid(userId, event.guid);
        break;
      case 'DeletionCompleted':
      case 'DeletionFailed':
        this.deletionIds.push([userId, event.deletionId]);
        break;
      case 'DeviceUpdateRequested':
        this.deviceIds.push([userId, event.deviceId]);
        break;
      case 'GpodderUploadRequested':
        this.upload(event);
        break;
      case 'EpisodeActionsUploaded':
        for (const action of event.actions)
          if (action.device !== undefined) this.deviceIds.push([userId, action.device]);
        break;
      case 'SyncActionsPosted':
        for (const action of event.actions) this.syncAction(userId, action);
        break;
      case 'FeedMoved':
        for (const guid of event.guids) this.guid(userId, guid);
        this.feedUrl(userId, event.newFeedUrl);
        break;
      case 'SettingsUpdateRequested':
        this.settingsScopes.push([userId, settingsScopeIdOf(event.scope)]);
        if (event.scope.kind === 'device') this.deviceIds.push([userId, event.scope.deviceId]);
        break;
      default: {
        const unexpected: never = event;
        throw new DomainInvariantError(`unknown event ${JSON.stringify(unexpected)}`);
      }
    }
  }

  private upload(event: GpodderUploadRequested): void {
    const { userId } = event;
    this.deviceIds.push([userId, event.deviceId]);
    // Added URLs are items: one that carries a guid (the log's schema allows it) reaches by it too.
    for (const added of event.add) this.item(userId, added);
    for (const url of event.remove) this.feedUrl(userId, url);
    // A URL reaches every subscription holding it now, and two can hold one URL (a POST item
    // matched by guid, a PATCH new_feed_url) while the read model indexes only the last to take
    // it: an upload that adds or removes a URL reaches the whole user, as a replacing one does.
    if (
      event.replace === true ||
      event.add.some((added) => checkFeedUrl(added.feedUrl).ok) ||
      event.remove.some((url) => checkFeedUrl(url).ok)
    )
      this.wholeUsers.add(userId);
  }

  private feedUrl(userId: UserId, value: unknown): void {
    const checked = checkFeedUrl(value);
    if (checked.ok) this.feedUrls.push([userId, checked.normalized]);
  }

  private guid(userId: UserId, value: unknown): void {
    if (isGuid(value)) this.guids.push([userId, normalizeGuid(value)]);
  }

  /** A sync action reaches by its action_id, its data's sync_id and guid, and its feed_url with the
   * podcast guid derived from it (whatever the action: extra keys only load more). */
  private syncAction(userId: UserId, action: unknown): void {
    if (!isObject(action)) return;
    if (isGuid(action.action_id)) this.actionIds.push([userId, normalizeGuid(action.action_id)]);
    const data = action.data;
    if (!isObject(data)) return;
    if (isGuid(data.sync_id)) this.syncIds.push([userId, normalizeGuid(data.sync_id)]);
    this.guid(userId, data.guid);
    const checked = checkFeedUrl(data.feed_url);
    if (!checked.ok) return;
    this.feedUrls.push([userId, checked.normalized]);
    this.guids.push([userId, podcastGuidOf(checked.normalized)]);
  }

  /** An item reaches by its feed_url and guid only when its feed_url passes, as decideItem reads it. */
  private item(userId: UserId, added: AddItem): void {
    const checked = checkFeedUrl(added.feedUrl);
    if (!checked.ok) return;
    this.feedUrls.push([userId, checked.normalized]);
    this.guid(userId, added.guid);
  }
}

/** The part of one user's state that the user's keys reach, which is what a loader loads: the
 * subscriptions a key names (by any guid of their chain, a normalised feed_url that maps to them,
 * their sync_id, a deletion of theirs, or a seen action that acted on them) and those they are
 * merged into, with every guid, feed_url and sync_id mapping to them; the deletions named, and
 * those attached to a subscription loaded; the devices, seen actions and settings scopes named;
 * both clocks. */
export function reach(state: UserSubscriptions, keys: BatchKeys): UserSubscriptions {
  const mine = <T>(pairs: readonly (readonly [UserId, T])[]): T[] =>
    pairs.filter(([userId]) => userId === state.userId).map(([, value]) => value);
  const deletions = new Map<number, Deletion>();
  const named: Guid[] = keys.wholeUsers.has(state.userId) ? [...state.subscriptions.keys()] : [];
  for (const guid of mine(keys.guids)) named.push(...found(state.byGuid.get(guid)));
  for (const url of mine(keys.feedUrls)) named.push(...found(state.byFeedUrl.get(url)));
  for (const syncId of mine(keys.syncIds)) named.push(...found(state.bySyncId.get(syncId)));
  const seenActions = new Map<string, SeenAction>();
  for (const actionId of mine(keys.actionIds)) {
    const seen = state.seenActions.get(actionId);
    if (seen === undefined) continue;
    seenActions.set(actionId, seen);
    if (seen.subscriptionId !== null) named.push(seen.subscriptionId);
  }
  for (const deletionId of mine(keys.deletionIds)) {
    const deletion = state.deletions.get(deletionId);
    if (deletion === undefined) continue;
    deletions.set(deletionId, deletion);
    named.push(deletion.subscriptionId);
  }
  const subscriptions = new Map<Guid, Subscription>();
  for (let id = named.pop(); id !== undefined; id = named.pop()) {
    const subscription = state.subscriptions.get(id);
    if (subscription === undefined || subscriptions.has(id)) continue;
    subscriptions.set(id, subscription);
    if (subscription.mergedInto !== null) named.push(subscription.mergedInto);
    const attached =
      subscription.deletionId === null ? undefined : state.deletions.get(subscription.deletionId);
    if (attached !== undefined) deletions.set(attached.deletionId, attached);
  }
  const toLoaded = <K>(map: ReadonlyMap<K, Guid>): Map<K, Guid> =>
    new Map([...map].filter(([, id]) => subscriptions.has(id)));
  const devices = new Map<DeviceId, Device>();
  for (const deviceId of mine(keys.deviceIds)) {
    const device = state.devices.get(deviceId);
    if (device !== undefined) devices.set(deviceId, device);
  }
  const settings = new Map<string, ScopeSettings>();
  for (const scopeId of mine(keys.settingsScopes)) {
    const scope = state.settings.get(scopeId);
    if (scope !== undefined) settings.set(scopeId, scope);
  }
  return {
    userId: state.userId,
    lastInstant: state.lastInstant,
    subscriptions,
    byGuid: toLoaded(state.byGuid),
    byFeedUrl: toLoaded(state.byFeedUrl),
    deletions,
    devices,
    syncClock: state.syncClock,
    bySyncId: toLoaded(state.bySyncId),
    seenActions,
    settings,
  };
}

const found = (id: Guid | undefined): Guid[] => (id === undefined ? [] : [id]);
