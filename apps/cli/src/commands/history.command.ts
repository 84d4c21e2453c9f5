import { findUserId } from '@castlog/auth';
import {
  checkFeedUrl,
  describeOutcome,
  describeRequest,
  isRecord,
  isGuid,
  keysOf,
  LogEvent,
  normalizeFeedUrl,
  normalizeGuid,
  podcastGuidOf,
  RequestOutcome,
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
