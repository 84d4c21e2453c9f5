import type { LogEvent, SettingsScope, SettingsUpdateRequested } from './log-event';
import type { RequestOutcome, SyncResult } from '../subscriptions/outcome';
import { toIso } from '../time';

/** Requests and their outcomes in one line each, as `castlog history` and the account page show
 * them. */

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const MAX_URL = 40;
const MAX_URLS = 3;

const short = (text: string, max = MAX_URL): string =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

/** A value a client sent, as text: a string as it is, anything else as its JSON. */
const asText = (value: unknown): string =>
  typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));

/** One sync action in a few words: `subscription/subscribe https://a…`, `subscription/unsubscribe
 * <sync_id>` (an update: its sync_id, then the feed_url it sets). */
const describeSyncAction = (action: unknown): string => {
  if (!isRecord(action)) return short(asText(action));
  const data = isRecord(action.data) ? action.data : {};
  const target = [data.sync_id, data.feed_url]
    .filter((value) => value !== undefined)
    .map((value) => short(asText(value)));
  return [`${short(asText(action.type))}/${short(asText(action.action))}`, ...target].join(' ');
};

/** A sync result: its status, and why when it says. */
const describeSyncResult = (result: SyncResult): string =>
  result.reason === undefined ? result.status : `${result.status} (${short(result.reason, 60)})`;

/** A settings scope in a few words: `account`, `device phone`, `podcast https://a…`. */
const describeScope = (scope: SettingsScope): string => {
  switch (scope.kind) {
    case 'account':
      return 'account';
    case 'device':
      return `device ${scope.deviceId}`;
    case 'podcast':
      return `podcast ${short(scope.podcast)}`;
    case 'episode':
      return `episode ${short(scope.episode)} of ${short(scope.podcast)}`;
  }
};

/** The first few values a client sent, each shortened to `max`: `https://a…, https://b…, +3 more`. */
const firstFew = (values: readonly unknown[], max = MAX_URL): string =>
  values
    .slice(0, MAX_URLS)
    .map((value) => short(typeof value === 'string' ? value : JSON.stringify(value), max))
    .join(', ') + (values.length > MAX_URLS ? `, +${values.length - MAX_URLS} more` : '');

/** A settings change: its scope, and the keys it sets and removes. */
const describeSettingsRequest = (event: SettingsUpdateRequested): string => {
  const set = Object.keys(event.set);
  const parts = [
    ...(set.length > 0 ? [`set ${set.length} [${firstFew(set, 20)}]`] : []),
    ...(event.remove.length > 0 ? [`remove ${event.remove.length} [${firstFew(event.remove, 20)}]`] : []),
  ];
  return `gpodder settings of ${describeScope(event.scope)}: ${parts.length > 0 ? parts.join(' ') : 'no change'}`;
};

/** The request in one line: `POST 2 items: https://a…, https://b…`, `PATCH <guid> is_subscribed=false`. */
export function describeRequest(event: LogEvent): string {
  switch (event.type) {
    case 'SubscriptionsAddRequested': {
      const urls = event.items.map((item) =>
        short(typeof item.feedUrl === 'string' ? item.feedUrl : JSON.stringify(item.feedUrl)),
      );
      const more = urls.length > MAX_URLS ? `, +${urls.length - MAX_URLS} more` : '';
      const count = `${event.items.length} item${event.items.length === 1 ? '' : 's'}`;
      return `POST ${count}: ${urls.slice(0, MAX_URLS).join(', ')}${more}`;
    }
    case 'SubscriptionUpdateRequested': {
      const fields = [
        ...(event.newFeedUrl !== undefined ? [`new_feed_url=${short(event.newFeedUrl)}`] : []),
        ...(event.newGuid !== undefined ? [`new_guid=${event.newGuid}`] : []),
        ...(event.isSubscribed !== undefined ? [`is_subscribed=${event.isSubscribed}`] : []),
      ];
      return `PATCH ${event.guid} ${fields.join(' ')}`;
    }
    case 'DeletionRequested':
      return `DELETE ${event.guid}`;
    case 'DeletionCompleted':
      return `DeletionCompleted #${event.deletionId} at ${toIso(event.deletedAt)}`;
    case 'DeletionFailed':
      return `DeletionFailed #${event.deletionId}: ${short(event.reason, 60)}`;
    case 'DeviceUpdateRequested': {
      const fields = [
        ...(event.caption !== undefined ? [`caption=${short(event.caption)}`] : []),
        ...(event.deviceType !== undefined ? [`type=${event.deviceType}`] : []),
      ];
      return `gpodder device ${event.deviceId} ${fields.join(' ')}`.trimEnd();
    }
    case 'GpodderUploadRequested': {
      const added = `${event.add.length} [${firstFew(event.add.map((item) => item.feedUrl))}]`;
      // A replacing upload's remove list is empty: every feed not in it is unsubscribed.
      if (event.replace === true) return `gpodder PUT from ${event.deviceId}: the set becomes ${added}`;
      return `gpodder upload from ${event.deviceId}: add ${added} remove ${event.remove.length} [${firstFew(event.remove)}]`;
    }
    case 'EpisodeActionsUploaded':
      return `gpodder ${event.actions.length} episode action${event.actions.length === 1 ? '' : 's'}`;
    case 'SyncActionsPosted': {
      const more = event.actions.length > MAX_URLS ? `, +${event.actions.length - MAX_URLS} more` : '';
      const count = `${event.actions.length} action${event.actions.length === 1 ? '' : 's'}`;
      const actions = event.actions.slice(0, MAX_URLS).map(describeSyncAction).join(', ');
      return `sync: ${count} from client ${event.clientId}: ${actions}${more}`;
    }
    case 'FeedMoved': {
      const cause = event.cause === 'permanent-redirect' ? 'a permanent redirect' : 'its new-feed-url';
      return `feed moved (${cause}): ${short(event.feedUrl)} -> ${short(event.newFeedUrl)}`;
    }
    case 'SettingsUpdateRequested':
      return describeSettingsRequest(event);
    default: {
      const never: never = event;
      throw new Error(`unknown event ${JSON.stringify(never)}`);
    }
  }
}

/** The stored outcome in one line: `subscribed 2, failed 0`, `404`, `deletion #7 accepted`. */
export function describeOutcome(outcome: RequestOutcome): string {
  switch (outcome.kind) {
    case 'Added':
      return `subscribed ${outcome.success.length}, failed ${outcome.failure.length}`;
    case 'Updated': {
      const changed = outcome.changed;
      const fields = [
        ...(changed.newFeedUrl !== undefined ? [`feed_url=${short(changed.newFeedUrl)}`] : []),
        ...(changed.newGuid !== undefined ? [`guid=${changed.newGuid}`] : []),
        ...(changed.isSubscribed !== undefined ? [`is_subscribed=${changed.isSubscribed}`] : []),
      ];
      return fields.length === 0 ? 'unchanged' : `updated ${fields.join(' ')}`;
    }
    case 'DeletionAccepted':
      return `deletion #${outcome.deletionId} accepted`;
    case 'NotFound':
      return '404';
    case 'Gone':
      return '410';
    case 'Recorded':
      return 'recorded';
    case 'Uploaded':
      return `uploaded, ${outcome.updateUrls.length} URL${outcome.updateUrls.length === 1 ? '' : 's'} to update`;
    case 'ActionsRecorded':
      return 'actions recorded';
    case 'DeviceUpdated':
      return 'device saved';
    case 'Synced':
      return outcome.results.map(describeSyncResult).join(', ');
    case 'Moved':
      if (outcome.refused !== undefined) return `not moved: ${outcome.refused}`;
      return outcome.moved.length === 0 ? 'nothing to move' : `moved ${outcome.moved.join(' ')}`;
    case 'SettingsUpdated':
      return `settings saved, the scope holds ${outcome.keys} key${outcome.keys === 1 ? '' : 's'}`;
    case 'SettingsRefused':
      return `refused (400): ${short(outcome.message, 80)}`;
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(never)}`);
    }
  }
}
