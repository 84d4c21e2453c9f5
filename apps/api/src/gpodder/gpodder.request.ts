import {
  AddItem,
  checkFeedUrl,
  conflictingUrl,
  DEVICE_TYPES,
  DeviceId,
  DeviceType,
  EPISODE_ACTION_KINDS,
  EpisodeAction,
  EpisodeActionKind,
  isDeviceId,
  toGpodderTime,
} from '@castlog/domain';
import { MAX_PLAY_SECONDS, MAX_UPLOAD_URLS, UNSTORABLE_TEXT } from '@castlog/event-log';
import { OpmlError, parseOpml } from '@castlog/opml';
import { randomUUID } from 'node:crypto';
import { ValidationFailed } from '../http/errors';
import { checkStorable, isObject, parseDateTime } from '../http/parse';

// The gpodder.net face's input: path segments, queries and bodies, checked before anything reaches
// the log. Every refusal is a ValidationFailed, which gpodder routes answer 400 (GpodderRoute).
// Bodies arrive as text whatever their Content-Type and are read by their content here.

/** The simple API's formats: the file extension of its paths. */
export const SIMPLE_FORMATS = ['json', 'opml', 'txt'] as const;
export type SimpleFormat = (typeof SIMPLE_FORMATS)[number];

/** The largest `since` read as such; a later one reads nothing newer either. Keeps `since * 1000`
 * an exact integer (and a PostgreSQL bigint). */
const MAX_SINCE_SECONDS = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

export function parseDeviceId(value: unknown, name = 'the device id'): DeviceId {
  if (!isDeviceId(value)) throw new ValidationFailed(`${name} must be 1 to 64 of A-Z a-z 0-9 . _ -`);
  return value;
}

/** A query parameter given at most once (Fastify gives an array for a repeated one). */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ValidationFailed(`${name} must be given once`);
  return value;
}

/** `since`: Unix seconds, a non-negative integer; absent or 0 means from the beginning (null). */
export function parseSince(query: Record<string, unknown>): number | null {
  const text = single(query, 'since');
  if (text === undefined) return null;
  if (!/^\d+$/.test(text)) throw new ValidationFailed('since must be a non-negative integer (Unix seconds)');
  const seconds = Math.min(Number(text), MAX_SINCE_SECONDS);
  return seconds === 0 ? null : seconds;
}

export interface EpisodeActionsQuery {
  readonly since: number | null;
  readonly podcast?: string;
  readonly device?: DeviceId;
  readonly aggregated: boolean;
}

/** `GET /api/2/episodes/{user}.json?since=&podcast=&device=&aggregated=`. */
export function parseEpisodeActionsQuery(query: Record<string, unknown>): EpisodeActionsQuery {
  const since = parseSince(query);
  const podcast = single(query, 'podcast');
  if (podcast !== undefined && UNSTORABLE_TEXT.test(podcast))
    throw new ValidationFailed('podcast must not hold U+0000 or unpaired surrogates');
  const device = single(query, 'device');
  const aggregatedText = single(query, 'aggregated')?.toLowerCase();
  if (aggregatedText !== undefined && !['true', 'false', '1', '0'].includes(aggregatedText))
    throw new ValidationFailed('aggregated must be true or false');
  return {
    since,
    ...(podcast === undefined ? {} : { podcast }),
    ...(device === undefined ? {} : { device: parseDeviceId(device, 'device') }),
    aggregated: aggregatedText === 'true' || aggregatedText === '1',
  };
}

/** The body's JSON value, as the log and the read model can store it (`checkStorable`). */
export function parseJsonBody(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ValidationFailed('the body is not JSON');
  }
  checkStorable(value);
  return value;
}

/** A body that must be a JSON object; an empty (or blank) body is `{}`, as AntennaPod sends a
 * device update without fields. */
function parseObjectBody(text: string, emptyIsObject: boolean): Record<string, unknown> {
  if (emptyIsObject && text.trim() === '') return {};
  const value = parseJsonBody(text);
  if (!isObject(value)) throw new ValidationFailed('the body must be a JSON object');
  return value;
}

export interface DeviceUpdate {
  readonly caption?: string;
  readonly deviceType?: DeviceType;
}

/** `POST /api/2/devices/{user}/{device}.json`: `{caption?, type?}`, other keys ignored. */
export function parseDeviceUpdate(text: string): DeviceUpdate {
  const { caption, type } = parseObjectBody(text, true);
  if (caption !== undefined && typeof caption !== 'string')
    throw new ValidationFailed('caption must be a string');
  if (type !== undefined && !(DEVICE_TYPES as readonly unknown[]).includes(type))
    throw new ValidationFailed(`type must be one of ${DEVICE_TYPES.join(', ')}`);
  return {
    ...(caption === undefined ? {} : { caption }),
    ...(type === undefined ? {} : { deviceType: type as DeviceType }),
  };
}

/** A POST item for each added URL, with a fresh candidate guid the decider uses only when the URL
 * matches nothing (so that a replay draws the same one). */
const addItems = (urls: readonly unknown[]): AddItem[] =>
  urls.map((feedUrl) => ({ feedUrl, candidateGuid: randomUUID() }));

function checkUploadSize(count: number, name: string): void {
  if (count > MAX_UPLOAD_URLS)
    throw new ValidationFailed(`${name} must hold at most ${MAX_UPLOAD_URLS} URLs`);
}

export interface Upload {
  readonly add: AddItem[];
  readonly remove: unknown[];
}

/** `POST /api/2/subscriptions/{user}/{device}.json`: `{add: [url], remove: [url]}`, either list
 * may be left out. The URLs themselves are judged by the decider (a refused one is reported
 * `[url, ""]`); a URL in both lists (after normalising) refuses the whole upload. */
export function parseUpload(text: string): Upload {
  const { add = [], remove = [] } = parseObjectBody(text, false);
  if (!Array.isArray(add)) throw new ValidationFailed('add must be an array of URLs');
  if (!Array.isArray(remove)) throw new ValidationFailed('remove must be an array of URLs');
  checkUploadSize(add.length, 'add');
  checkUploadSize(remove.length, 'remove');
  const both = conflictingUrl(add, remove);
  if (both !== undefined) throw new ValidationFailed(`${both} is both added and removed`);
  return { add: addItems(add), remove };
}

/** A simple-API PUT body in its format, as the added URLs of a replacing upload: a JSON list, an
 * OPML document (every outline with an xmlUrl), or text with one URL per line (blank lines
 * skipped, spaces around a URL trimmed). A list none of whose URLs the `/v1` rules accept is
 * refused: as a replacing upload it would unsubscribe every feed, and its answer (an empty body)
 * would not say why (an OPML document PUT as text, say). An empty list still empties the set. */
export function parseSimpleList(format: SimpleFormat, text: string): AddItem[] {
  let urls: unknown[];
  switch (format) {
    case 'json': {
      const value = parseJsonBody(text);
      if (!Array.isArray(value)) throw new ValidationFailed('the body must be a JSON list of URLs');
      urls = value;
      break;
    }
    case 'opml':
      try {
        urls = parseOpml(text).feeds.map((feed) => feed.url);
      } catch (error) {
        if (error instanceof OpmlError) throw new ValidationFailed(error.message);
        throw error;
      }
      break;
    case 'txt':
      urls = text
        .split(/\r\n|\r|\n/)
        .map((line) => line.trim())
        .filter((line) => line !== '');
      break;
  }
  if (urls.some((url) => typeof url === 'string' && UNSTORABLE_TEXT.test(url)))
    throw new ValidationFailed('URLs must not hold U+0000 or unpaired surrogates');
  checkUploadSize(urls.length, 'the list');
  if (urls.length > 0 && !urls.some((url) => checkFeedUrl(url).ok))
    throw new ValidationFailed(
      `no entry of the list is an http or https URL (the first: ${describeEntry(urls[0])})`,
    );
  return addItems(urls);
}

/** An entry as the error message quotes it: its first 80 characters. */
const describeEntry = (entry: unknown): string => {
  const text = typeof entry === 'string' ? entry : JSON.stringify(entry);
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 79)}…` : text);
};

const PLAY_FIELDS = ['started', 'position', 'total'] as const;

/** An action's timestamp as gpodder.net keeps it, `YYYY-MM-DDTHH:MM:SS` in UTC: any RFC 3339
 * date-time is read (without an offset it is UTC; a fraction of a second is dropped). */
function parseActionTimestamp(value: unknown, name: string): string {
  const instant = parseDateTime(value, name);
  const text = instant === undefined ? '' : toGpodderTime(Math.floor(instant / 1000) * 1000);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(text))
    throw new ValidationFailed(`${name} must be a date-time between the years 0000 and 9999`);
  return text;
}

/** One action of `POST /api/2/episodes/{user}.json`. `podcast` and `episode` are non-empty strings,
 * `action` one of download, play, delete, new in any case (kept lower-case), `device` a device
 * id, `guid` a string. `started`, `position` and `total` are whole seconds (0 to 2^31 - 1) on a play; on
 * any other action they mean nothing and are dropped, as gpodder.net drops them. Other keys are
 * ignored. */
function parseEpisodeAction(value: unknown, index: number): EpisodeAction {
  const at = `actions[${index}]`;
  if (!isObject(value)) throw new ValidationFailed(`${at} must be an object`);
  const { podcast, episode, action, timestamp, device, guid } = value;
  if (typeof podcast !== 'string' || podcast === '')
    throw new ValidationFailed(`${at}.podcast must be a non-empty string`);
  if (typeof episode !== 'string' || episode === '')
    throw new ValidationFailed(`${at}.episode must be a non-empty string`);
  const kind = typeof action === 'string' ? action.toLowerCase() : undefined;
  if (!(EPISODE_ACTION_KINDS as readonly unknown[]).includes(kind))
    throw new ValidationFailed(`${at}.action must be one of ${EPISODE_ACTION_KINDS.join(', ')}`);
  const parsed: { -readonly [K in keyof EpisodeAction]: EpisodeAction[K] } = {
    podcast,
    episode,
    action: kind as EpisodeActionKind,
  };
  if (timestamp !== undefined) parsed.timestamp = parseActionTimestamp(timestamp, `${at}.timestamp`);
  if (device !== undefined) parsed.device = parseDeviceId(device, `${at}.device`);
  if (guid !== undefined) {
    if (typeof guid !== 'string') throw new ValidationFailed(`${at}.guid must be a string`);
    parsed.guid = guid;
  }
  if (parsed.action === 'play') {
    for (const field of PLAY_FIELDS) {
      const seconds = value[field];
      if (seconds === undefined) continue;
      if (
        typeof seconds !== 'number' ||
        !Number.isInteger(seconds) ||
        seconds < 0 ||
        seconds > MAX_PLAY_SECONDS
      )
        throw new ValidationFailed(
          `${at}.${field} must be an integer from 0 to ${MAX_PLAY_SECONDS} (seconds)`,
        );
      parsed[field] = seconds;
    }
  }
  return parsed;
}

/** `POST /api/2/episodes/{user}.json`: a JSON list of actions, at most MAX_UPLOAD_URLS. */
export function parseEpisodeActions(text: string): EpisodeAction[] {
  const value = parseJsonBody(text);
  if (!Array.isArray(value)) throw new ValidationFailed('the body must be a JSON list of episode actions');
  if (value.length > MAX_UPLOAD_URLS)
    throw new ValidationFailed(`the body must hold at most ${MAX_UPLOAD_URLS} episode actions`);
  return value.map(parseEpisodeAction);
}

/** `POST /api/2/sync-devices/{user}.json`: `{synchronize: [[device id]], "stop-synchronize":
 * [device id]}`, either left out, or an empty body. Checked for its shape only: every device of
 * a user is synchronized with every other, so the request changes nothing. */
export function parseSyncRequest(text: string): void {
  const body = parseObjectBody(text, true);
  const synchronize = body.synchronize ?? [];
  const stop = body['stop-synchronize'] ?? [];
  if (!Array.isArray(synchronize) || !synchronize.every((group) => Array.isArray(group)))
    throw new ValidationFailed('synchronize must be a list of lists of device ids');
  synchronize.flat().forEach((id) => parseDeviceId(id, 'synchronize'));
  if (!Array.isArray(stop)) throw new ValidationFailed('stop-synchronize must be a list of device ids');
  stop.forEach((id) => parseDeviceId(id, 'stop-synchronize'));
}
