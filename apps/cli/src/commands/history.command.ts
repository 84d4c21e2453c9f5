import { findUserId } from '@castlog/auth';
import {
  checkFeedUrl,
  isGuid,
  keysOf,
  LogEvent,
  normalizeFeedUrl,
  normalizeGuid,
  podcastGuidOf,
  RequestOutcome,
  SettingsScope,
  SettingsUpdateRequested,
  SyncResult,
  toIso,
} from '@castlog/domain';
import { EventLog, LogRecord } from '@castlog/event-log';
import { FeedCatalog } from '@castlog/feeds';
import { HistoryQuery, SubscriptionFamily } from '@castlog/read-model';
import Table from 'cli-table3';
import { DataSource } from 'typeorm';
import { CliError, CommandIo, runCommand } from './command-io';

export interface HistoryDeps extends Omit<CommandIo, 'stdin'> {
  readonly dataSource: DataSource;
  readonly eventLog: EventLog;
  /** The live read model's schema (READ_MODEL_SCHEMA), where the outcomes are. */
  readonly schema: string;
}

export interface HistoryOptions {
  /** Only the events that concern the subscription with this guid. */
  readonly guid?: string;
  readonly json?: boolean;
}

/** One event of the history, as `--json` prints it. */
export interface HistoryEntry {
  /** The log's append time. */
  readonly time: string;
  readonly partition: number;
  readonly offset: number;
  readonly type: LogEvent['type'];
  readonly requestId: string;
  /** What was asked, in one line. */
  readonly request: string;
  /** What it did, in one line; `not applied yet` while the projection has not reached it. */
  readonly result: string;
  readonly event: LogEvent;
  readonly outcome: RequestOutcome | null;
  /** The instant the projection decided it at (the service's "now" for it). */
  readonly instant: string | null;
  /** The titles of the feeds it names (normalised URL → title), where the feed catalog knows them. */
  readonly titles?: Readonly<Record<string, string>>;
}

/** `castlog history <user> [--guid <guid>] [--json]`: the user's events, read from the log in log
 * order, each with the outcome the projection stored for it. */
export function history(deps: HistoryDeps, user: string, options: HistoryOptions = {}): Promise<number> {
  return runCommand(deps, async () => {
    const query = new HistoryQuery(deps.dataSource, deps);
    const userId = await userIdOf(deps.dataSource, query, user);
    const concerns =
      options.guid === undefined ? () => true : await subscriptionFilter(deps, query, userId, options.guid);

    const outcomes = await query.outcomes(userId);
    const outcomeAt = new Map(outcomes.map((row) => [`${row.partition}:${row.offset}`, row]));

    const records: LogRecord[] = [];
    await deps.eventLog.readToEnd(
      async (batch) => {
        for (const record of batch.records)
          if (record.key === userId && concerns(record.value)) records.push(record);
      },
      await startOf(deps, query, userId),
    );
    records.sort((a, b) => a.partition - b.partition || a.offset - b.offset);

    const titles = await titlesOf(deps, userId, records);
    const entries: HistoryEntry[] = records.map((record) => {
      const stored = outcomeAt.get(`${record.partition}:${record.offset}`);
      const outcome = stored?.outcome ?? null;
      const named = feedUrlsOf([record]).flatMap((url) => {
        const title = titles.get(url);
        return title === undefined ? [] : [[url, title] as const];
      });
      return {
        time: toIso(record.timestamp),
        partition: record.partition,
        offset: record.offset,
        type: record.value.type,
        requestId: record.requestId,
        request: describeRequest(record.value),
        result: outcome === null ? 'not applied yet' : describeOutcome(outcome),
        event: record.value,
        outcome,
        instant: stored ? toIso(Number(stored.instant)) : null,
        ...(named.length > 0 ? { titles: Object.fromEntries(named) } : {}),
      };
    });

    if (options.json) {
      // JSON.stringify escapes C0 in strings; its own line breaks stay.
      deps.stdout.write(`${escapeInvisible(JSON.stringify(entries, null, 2), BEYOND_C0)}\n`);
      return 0;
    }
    printTable(
      deps,
      entries,
      titles,
      `${user}${options.guid === undefined ? '' : ` and guid ${options.guid}`}`,
    );
    return 0;
  });
}

/** The entries as a table, then the titles of the feeds they name; `whose` names the history. */
function printTable(
  deps: Omit<CommandIo, 'stdin'>,
  entries: readonly HistoryEntry[],
  titles: ReadonlyMap<string, string>,
  whose: string,
): void {
  if (entries.length === 0) {
    deps.stderr.write(`no events for ${whose}\n`);
    return;
  }
  const table = new Table({
    head: ['time', 'event', 'request', 'outcome'],
    style: { head: [], border: [], compact: true },
  });
  for (const entry of entries)
    table.push([entry.time, entry.type, escapeInvisible(entry.request), escapeInvisible(entry.result)]);
  deps.stdout.write(`${table.toString()}\n`);
  if (titles.size === 0) return;
  const legend = [...titles].map(([url, title]) => `  ${url}  ${title}`).join('\n');
  deps.stdout.write(`\nfeeds named above, by their titles:\n${escapeInvisible(legend)}\n`);
}

/** The normalised feed URLs the records' events name. */
const feedUrlsOf = (records: readonly LogRecord[]): string[] => [
  ...new Set(keysOf(records.map((record) => record.value)).feedUrls.map(([, url]) => url)),
];

/** The feed catalog's titles of the feeds the records name that the user holds. */
const titlesOf = (
  deps: HistoryDeps,
  userId: string,
  records: readonly LogRecord[],
): Promise<Map<string, string>> =>
  new FeedCatalog(deps.dataSource, { schema: deps.schema }).titlesFor(userId, feedUrlsOf(records));

/** The user's id, by name or by id; by id also for a user since removed, whose events and
 * outcomes stay in the log and the read model for audit. */
async function userIdOf(dataSource: DataSource, query: HistoryQuery, user: string): Promise<string> {
  const byId = isGuid(user) ? normalizeGuid(user) : null;
  const id = await findUserId(dataSource, user, byId);
  if (id) return id;
  if (byId !== null && (await query.firstApplied(byId)) !== undefined) return byId;
  throw new CliError(`no user ${user}`);
}

/** Where to start reading: from the user's first applied record in its partition when the
 * projection knows one (a user's events are all in one partition), else from the beginning. */
async function startOf(
  deps: HistoryDeps,
  query: HistoryQuery,
  userId: string,
): Promise<Map<number, number> | undefined> {
  const first = await query.firstApplied(userId);
  if (!first) return undefined;
  const from = await deps.eventLog.endOffsets();
  from.set(first.partition, Number(first.offset));
  return from;
}

/** Everything the read model knows of the subscription `guid` resolves to: the guids, normalised
 * feed_urls and deletions of it and of the subscriptions merged into it. An event concerns it when
 * it names one of them. A guid the read model does not know keeps the events naming that guid. */
async function subscriptionFilter(
  deps: HistoryDeps,
  query: HistoryQuery,
  userId: string,
  guid: string,
): Promise<(event: LogEvent) => boolean> {
  if (!isGuid(guid)) throw new CliError(`--guid must be a UUID, not ${guid}`);
  const family = await query.family(userId, normalizeGuid(guid));
  const guids = new Set(family?.guids ?? []);
  const known = guids.size > 0;
  if (!known) {
    deps.stderr.write(`guid ${guid} is not in the read model: showing the events that name it\n`);
    guids.add(normalizeGuid(guid));
  }
  const feedUrls = new Set(family?.feed_urls ?? []);
  // A removed URL reaches every subscription holding it now, also one another took it from later.
  const heldUrls = new Set([...feedUrls, ...(family?.current_feed_urls ?? []).map(normalizeFeedUrl)]);
  const deletionIds = new Set((family?.deletion_ids ?? []).map(Number));
  const hasGuid = (value: unknown) => isGuid(value) && guids.has(normalizeGuid(value));
  const among = (urls: ReadonlySet<string>) => (value: unknown) => {
    const checked = checkFeedUrl(value);
    return checked.ok && urls.has(checked.normalized);
  };
  const hasFeedUrl = among(feedUrls);
  const holdsFeedUrl = among(heldUrls);
  const namesInSync = syncActionFilter(family, hasGuid, hasFeedUrl);
  return (event) => {
    switch (event.type) {
      case 'SubscriptionsAddRequested':
        return event.items.some(
          (item) => hasGuid(item.guid) || hasGuid(item.candidateGuid) || hasFeedUrl(item.feedUrl),
        );
      case 'SubscriptionUpdateRequested':
        return hasGuid(event.guid) || hasGuid(event.newGuid) || hasFeedUrl(event.newFeedUrl);
      case 'DeletionRequested':
        return hasGuid(event.guid);
      case 'DeletionCompleted':
      case 'DeletionFailed':
        return deletionIds.has(event.deletionId);
      case 'DeviceUpdateRequested':
      case 'EpisodeActionsUploaded':
      case 'SettingsUpdateRequested':
        return false;
      case 'GpodderUploadRequested':
        // A replacing upload (simple-API PUT) can unsubscribe any subscription of the user (one
        // the read model knows: an unknown guid keeps only the events that name it).
        return (
          (known && event.replace === true) ||
          event.add.some((item) => hasGuid(item.candidateGuid) || hasFeedUrl(item.feedUrl)) ||
          event.remove.some(holdsFeedUrl)
        );
      case 'SyncActionsPosted':
        return event.actions.some(namesInSync);
      case 'FeedMoved':
        return event.guids.some(hasGuid) || hasFeedUrl(event.feedUrl) || hasFeedUrl(event.newFeedUrl);
      default: {
        const never: never = event;
        throw new Error(`unknown event ${JSON.stringify(never)}`);
      }
    }
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a sync action names the family: by its data's sync_id, guid or feed_url (or the podcast
 * guid a subscribe derives from it), or as an action seen before that acted on one of them (a
 * retry is answered with that subscription). */
function syncActionFilter(
  family: SubscriptionFamily | undefined,
  hasGuid: (value: unknown) => boolean,
  hasFeedUrl: (value: unknown) => boolean,
): (action: unknown) => boolean {
  const syncIds = new Set(family?.sync_ids ?? []);
  const actionIds = new Set(family?.action_ids ?? []);
  const among = (ids: ReadonlySet<string>, value: unknown) => isGuid(value) && ids.has(normalizeGuid(value));
  return (action) => {
    if (!isRecord(action)) return false;
    const data = isRecord(action.data) ? action.data : {};
    const checked = checkFeedUrl(data.feed_url);
    return (
      among(actionIds, action.action_id) ||
      among(syncIds, data.sync_id) ||
      hasGuid(data.guid) ||
      hasFeedUrl(data.feed_url) ||
      (checked.ok && hasGuid(podcastGuidOf(checked.normalized)))
    );
  };
}

/** Control characters (C0, DEL, C1) and the marks that reorder text on screen. The log holds what
 * clients sent, failed items included: printed as they are, they would move the cursor, clear the
 * screen or retitle the operator's terminal. JSON.stringify escapes only C0. */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const BEYOND_C0 = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every INVISIBLE character written as its `\uXXXX` escape (valid in JSON too). */
export const escapeInvisible = (text: string, which: RegExp = INVISIBLE): string =>
  text.replace(which, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

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
