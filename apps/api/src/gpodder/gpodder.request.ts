import {
  AddItem,
  checkFeedUrl,
  conflictingUrl,
  DEVICE_TYPES,
  DeviceId,
  DEVICE_ID,
  DeviceType,
  EPISODE_ACTION_KINDS,
  EpisodeAction,
  MAX_SCOPE_URL_LENGTH,
  MAX_SETTING_KEY_LENGTH,
  MAX_SETTING_VALUE_BYTES,
  MAX_SETTINGS_KEYS,
  SettingsScope,
  settingsRequestRefusal,
  toGpodderTime,
} from '@castlog/domain';
import { MAX_PLAY_SECONDS, MAX_UPLOAD_URLS, UNSTORABLE_TEXT } from '@castlog/event-log';
import { OpmlError, parseOpml } from '@castlog/opml';
import { randomUUID } from 'node:crypto';
import { z } from 'zod/v4';
import { ValidationFailed } from '../http/errors';
import { checkStorable, dateTimeValue, queryParameter } from '../http/parse';
import {
  at,
  boundedList,
  checked,
  IssuePath,
  Message,
  openApiSchema,
  parseWith,
  says,
  sentence,
} from '../http/schema';

// The gpodder.net face's input: path segments, queries and bodies, checked before anything reaches
// the log. Every refusal is a ValidationFailed, which gpodder routes answer 400 (GpodderRoute).
// Bodies arrive as text whatever their Content-Type and are read by their content here.

/** The simple API's formats of a device's list (`GET` and `PUT`): the file extension of its paths. */
export const SIMPLE_FORMATS = ['json', 'jsonp', 'opml', 'txt'] as const;
export type SimpleFormat = (typeof SIMPLE_FORMATS)[number];
/** The formats of the user's list (`GET` only): a device's, and gpodder.net's podcast XML. */
export const USER_LIST_FORMATS = [...SIMPLE_FORMATS, 'xml'] as const;
export type UserListFormat = (typeof USER_LIST_FORMATS)[number];

/** 400 "Invalid format" for a path's extension that is none of `formats` (mygpo's `check_format`),
 * naming them: `whose` list it is. The extension is quoted, cut to 20 characters. */
export function invalidFormat(format: string, formats: readonly string[], whose: string): ValidationFailed {
  const quoted = JSON.stringify(format.length > 20 ? `${format.slice(0, 19)}…` : format);
  const named = `${formats.slice(0, -1).join(', ')} or ${formats[formats.length - 1]}`;
  return new ValidationFailed(`Invalid format ${quoted}: ${whose} is ${named}`);
}

/** A JSONP callback: a JavaScript identifier, or a dotted path of them (`jQuery.cb`), of at most 64
 * characters. Nothing else reaches the script an answer is: a callback is an injection vector. */
export const JSONP_CALLBACK = /^[A-Za-z_$][A-Za-z0-9_$.]{0,63}$/;
const JSONP_REFUSED = `jsonp must name the callback: ${JSONP_CALLBACK.source}`;

/** The query of a `jsonp` list: `jsonp`, the callback (required: see `parseJsonpCallback`). */
const JSONP_QUERY = z.object({
  jsonp: queryParameter('jsonp', z.string(says(JSONP_REFUSED)).regex(JSONP_CALLBACK, says(JSONP_REFUSED))),
});

export function parseJsonpCallback(query: Record<string, unknown>): string {
  const { jsonp } = parseWith(JSONP_QUERY, query);
  if (jsonp === undefined) throw new ValidationFailed(JSONP_REFUSED);
  return jsonp;
}

/** The largest `since` read as such; a later one reads nothing newer either. Keeps `since * 1000`
 * an exact integer (and a PostgreSQL bigint). */
const MAX_SINCE_SECONDS = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

/** A device id, in a path, a query or a body (`name` says where). */
export const deviceId = (name: Message) => {
  const refused = says(sentence(name, 'must be 1 to 64 of A-Z a-z 0-9 . _ -'));
  return z.string(refused).regex(DEVICE_ID, refused);
};

/** A device id in a path. */
export const DEVICE_ID_PARAMETER = deviceId('the device id');
export const parseDeviceId = (value: unknown): DeviceId => parseWith(DEVICE_ID_PARAMETER, value);

/** `since`: Unix seconds, a non-negative integer; absent or 0 means from the beginning (null). */
const since = (description: string) =>
  queryParameter(
    'since',
    checked((text) => {
      if (typeof text !== 'string' || !/^\d+$/.test(text)) return undefined;
      const seconds = Math.min(Number(text), MAX_SINCE_SECONDS);
      return seconds === 0 ? null : seconds;
    }, 'since must be a non-negative integer (Unix seconds)').meta({
      type: 'integer',
      minimum: 0,
      description,
    }),
  );

/** `GET /api/2/subscriptions/{user}/{device}.json?since=`. */
export const SUBSCRIPTION_CHANGES_QUERY = z.object({
  since: since(
    'Unix seconds, inclusive: changes at or after it. Absent or 0: every subscribed URL, nothing removed.',
  ),
});

export const parseSince = (query: Record<string, unknown>): number | null =>
  parseWith(SUBSCRIPTION_CHANGES_QUERY, query).since ?? null;

export interface EpisodeActionsQuery {
  readonly since: number | null;
  readonly podcast?: string;
  readonly device?: DeviceId;
  readonly aggregated: boolean;
}

const AGGREGATED = ['true', 'false', '1', '0'];

/** `GET /api/2/episodes/{user}.json?since=&podcast=&device=&aggregated=`. */
export const EPISODE_ACTIONS_QUERY = z.object({
  since: since('Unix seconds, inclusive: actions received at or after it. Absent or 0: all of them.'),
  podcast: queryParameter(
    'podcast',
    z
      .string()
      .refine(
        (text) => !UNSTORABLE_TEXT.test(text),
        says('podcast must not hold U+0000 or unpaired surrogates'),
      )
      .meta({ description: 'Only the actions of this feed URL' }),
  ),
  device: queryParameter(
    'device',
    deviceId('device').meta({
      description: 'Only the actions uploaded naming this device (a filter: no device is created)',
    }),
  ),
  aggregated: queryParameter(
    'aggregated',
    checked((text) => {
      const value = typeof text === 'string' ? text.toLowerCase() : undefined;
      return value !== undefined && AGGREGATED.includes(value)
        ? value === 'true' || value === '1'
        : undefined;
    }, 'aggregated must be true or false').meta({
      type: 'string',
      enum: AGGREGATED,
      description: 'true: only the latest action of each episode',
    }),
  ),
});

export function parseEpisodeActionsQuery(query: Record<string, unknown>): EpisodeActionsQuery {
  const { since, podcast, device, aggregated } = parseWith(EPISODE_ACTIONS_QUERY, query);
  return {
    since: since ?? null,
    ...(podcast === undefined ? {} : { podcast }),
    ...(device === undefined ? {} : { device }),
    aggregated: aggregated ?? false,
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

/** A JSON body read by `schema`; with `emptyIsObject`, an empty (or blank) body is `{}`, as
 * AntennaPod sends a device update without fields. */
const parseJsonBodyWith = <S extends z.ZodType>(schema: S, text: string, emptyIsObject: boolean) =>
  parseWith(schema, emptyIsObject && text.trim() === '' ? {} : parseJsonBody(text));

const OBJECT_BODY = says('the body must be a JSON object');

export interface DeviceUpdate {
  readonly caption?: string;
  readonly deviceType?: DeviceType;
}

/** `POST /api/2/devices/{user}/{device}.json`: `{caption?, type?}`, other keys ignored. */
export const DEVICE_UPDATE = z
  .object(
    {
      caption: z.string(says('caption must be a string')).meta({ example: 'My phone' }).optional(),
      type: z.enum(DEVICE_TYPES, says(`type must be one of ${DEVICE_TYPES.join(', ')}`)).optional(),
    },
    OBJECT_BODY,
  )
  .transform(({ caption, type }): DeviceUpdate => ({
    ...(caption === undefined ? {} : { caption }),
    ...(type === undefined ? {} : { deviceType: type }),
  }));

export const parseDeviceUpdate = (text: string): DeviceUpdate => parseJsonBodyWith(DEVICE_UPDATE, text, true);

/** The white space gpodder.net's `normalize_feed_url` strips from both ends of a feed URL first
 * (Python's `str.strip()`: what `str.isspace()` holds): tab, line feed, vertical tab, form feed,
 * carriage return, U+001C to U+001F, space, U+0085, U+00A0, U+1680, U+2000 to U+200A, U+2028,
 * U+2029, U+202F, U+205F and U+3000; and U+FEFF, which JavaScript's `trim` (what the text format's
 * lines lost before) strips too: a byte order mark before a list's first URL. */
const FEED_URL_SPACE: ReadonlySet<number> = new Set([
  0x09,
  0x0a,
  0x0b,
  0x0c,
  0x0d,
  0x1c,
  0x1d,
  0x1e,
  0x1f,
  0x20,
  0x85,
  0xa0,
  0x1680,
  ...Array.from({ length: 11 }, (_, i) => 0x2000 + i),
  0x2028,
  0x2029,
  0x202f,
  0x205f,
  0x3000,
  0xfeff,
]);

/** A feed URL of the gpodder.net face without the white space around it, as gpodder.net reads one
 * (the rules of /v1 then apply to what is left); anything but a string as it is. A loop, not a
 * regular expression: a run of white space inside a 4 MiB body must cost its length, once. */
export function trimFeedUrl<T>(url: T): T | string {
  if (typeof url !== 'string') return url;
  let [start, end] = [0, url.length];
  while (start < end && FEED_URL_SPACE.has(url.charCodeAt(start))) start += 1;
  while (end > start && FEED_URL_SPACE.has(url.charCodeAt(end - 1))) end -= 1;
  return start === 0 && end === url.length ? url : url.slice(start, end);
}

/** `[sent, trimmed]` for each distinct URL sent that white space surrounded, in the order sent. */
export function trimmedPairs(sent: readonly unknown[]): [string, string][] {
  const pairs = new Map<string, string>();
  for (const url of sent) {
    if (typeof url !== 'string' || pairs.has(url)) continue;
    const trimmed = trimFeedUrl(url);
    if (trimmed !== url) pairs.set(url, trimmed);
  }
  return [...pairs];
}

/** A POST item for each added URL, with a fresh candidate guid the decider uses only when the URL
 * matches nothing (so that a replay draws the same one). */
const addItems = (urls: readonly unknown[]): AddItem[] =>
  urls.map((feedUrl) => ({ feedUrl, candidateGuid: randomUUID() }));

const tooManyUrls = (name: string) => `${name} must hold at most ${MAX_UPLOAD_URLS} URLs`;

export interface Upload {
  /** The added URLs, trimmed, as items. */
  readonly add: AddItem[];
  /** The removed URLs, trimmed. */
  readonly remove: unknown[];
  /** Every URL as sent, added then removed: what the answer's `update_urls` speaks of. Not logged:
   * the event holds the trimmed URLs the decider judges, as the text format's lines always were; a
   * second copy of each URL as sent could double the largest upload's event, which the log's
   * message limit bounds (docs/operations.md, "Message sizes"). */
  readonly sent: unknown[];
}

const urlList = (name: string, description: string) =>
  z
    .array(z.unknown(), says(`${name} must be an array of URLs`))
    .meta({ items: { type: 'string' }, description })
    .optional();

/** `POST /api/2/subscriptions/{user}/{device}.json`: `{add: [url], remove: [url]}`, either list
 * may be left out. Each URL loses the white space around it (`trimFeedUrl`) and is then judged by
 * the decider (a refused one is reported `[url, ""]`); a URL in both lists (after trimming and
 * normalising) refuses the whole upload. Both lists are checked for their type before either for
 * its length. */
export const UPLOAD = z
  .object(
    {
      add: urlList('add', 'Feed URLs to subscribe to'),
      remove: urlList('remove', 'Feed URLs to unsubscribe from; none may also be in add'),
    },
    OBJECT_BODY,
  )
  .meta({ example: { add: ['https://example.com/feed.xml'], remove: [] } })
  .transform(({ add = [], remove = [] }, context): Upload => {
    const [added, removed] = [add.map(trimFeedUrl), remove.map(trimFeedUrl)];
    const refusal = uploadRefusal(added, removed);
    if (refusal === undefined) return { add: addItems(added), remove: removed, sent: [...add, ...remove] };
    context.addIssue({ code: 'custom', input: { add, remove }, message: refusal });
    return z.NEVER;
  });

/** Why an upload is refused whole, if it is: a list too long, or a URL in both lists. */
function uploadRefusal(add: readonly unknown[], remove: readonly unknown[]): string | undefined {
  if (add.length > MAX_UPLOAD_URLS) return tooManyUrls('add');
  if (remove.length > MAX_UPLOAD_URLS) return tooManyUrls('remove');
  const both = conflictingUrl(add, remove);
  return both === undefined ? undefined : `${both} is both added and removed`;
}

export const parseUpload = (text: string): Upload => parseJsonBodyWith(UPLOAD, text, false);

/** A simple-API PUT body in its format, as the added URLs of a replacing upload: a JSON list (in
 * the `json` and `jsonp` formats: mygpo reads a `jsonp` PUT as an empty list, which would
 * unsubscribe every feed), an OPML document (every outline with an xmlUrl), or text with one URL per line (blank lines
 * skipped); each URL without the white space around it (`trimFeedUrl`). A list none of whose URLs
 * the `/v1` rules accept is
 * refused: as a replacing upload it would unsubscribe every feed, and its answer (an empty body)
 * would not say why (an OPML document PUT as text, say). An empty list still empties the set. */
export function parseSimpleList(format: SimpleFormat, text: string): AddItem[] {
  let urls: unknown[];
  switch (format) {
    // A JSONP list's PUT carries the list as JSON: the callback wraps answers only.
    case 'json':
    case 'jsonp': {
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
      urls = text.split(/\r\n|\r|\n/).filter((line) => trimFeedUrl(line) !== '');
      break;
  }
  urls = urls.map(trimFeedUrl);
  if (urls.some((url) => typeof url === 'string' && UNSTORABLE_TEXT.test(url)))
    throw new ValidationFailed('URLs must not hold U+0000 or unpaired surrogates');
  if (urls.length > MAX_UPLOAD_URLS) throw new ValidationFailed(tooManyUrls('the list'));
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

/** Where in an episode actions upload an issue is: `actions[3].podcast`. */
const inActions = (path: IssuePath): string => at(['actions', ...path]);

/** An action's timestamp as gpodder.net keeps it, `YYYY-MM-DDTHH:MM:SS` in UTC: any RFC 3339
 * date-time is read (without an offset it is UTC; a fraction of a second is dropped). */
const ACTION_TIMESTAMP = dateTimeValue(inActions)
  .pipe(
    checked(
      (instant) => {
        const text = toGpodderTime(Math.floor((instant as number) / 1000) * 1000);
        return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(text) ? text : undefined;
      },
      sentence(inActions, 'must be a date-time between the years 0000 and 9999'),
    ),
  )
  .meta({
    type: 'string',
    description: 'When the action happened: `YYYY-MM-DDTHH:MM:SS` (UTC), or any RFC 3339 date-time',
    example: '2023-02-23T14:00:00',
  });

const nonEmptyString = (description: string) =>
  z
    .string(says(sentence(inActions, 'must be a non-empty string')))
    .min(1, says(sentence(inActions, 'must be a non-empty string')))
    .meta({ description });

/** An action's `podcast`: a feed URL, without the white space around it (`trimFeedUrl`), non-empty. */
const ACTION_PODCAST = nonEmptyString('The feed URL; white space around it is trimmed').pipe(
  z
    .string()
    .transform((url) => trimFeedUrl(url))
    .pipe(z.string().min(1, says(sentence(inActions, 'must be a non-empty string')))),
);

const ACTION_KIND = sentence(inActions, `must be one of ${EPISODE_ACTION_KINDS.join(', ')}`);

const PLAY_FIELDS = ['started', 'position', 'total'] as const;
const PLAY_SECONDS = z.number().int().min(0).max(MAX_PLAY_SECONDS);
/** Read only on a play action (see EPISODE_ACTION): described here, checked there. */
const playSeconds = z
  .unknown()
  .meta({ ...openApiSchema(PLAY_SECONDS), description: 'play only: seconds' })
  .optional();

/** One action of `POST /api/2/episodes/{user}.json`. `podcast` and `episode` are non-empty strings
 * (`podcast` once trimmed of the white space around it, as every feed URL of this face), `action` one of download, play, delete, new, flattr in any case (kept lower-case), `device` a device
 * id, `guid` a string. `started`, `position` and `total` are whole seconds (0 to 2^31 - 1) on a play; on
 * any other action they mean nothing and are dropped, as gpodder.net drops them. Other keys are
 * ignored. */
const EPISODE_ACTION = z
  .object(
    {
      podcast: ACTION_PODCAST,
      episode: nonEmptyString('The media URL'),
      action: z
        .string(says(ACTION_KIND))
        .transform((kind) => kind.toLowerCase())
        .pipe(z.enum(EPISODE_ACTION_KINDS, says(ACTION_KIND)))
        .meta({ description: 'download, play, delete, new or flattr, in any case', example: 'play' }),
      timestamp: ACTION_TIMESTAMP.optional(),
      device: deviceId(inActions).optional(),
      guid: z.string(says(sentence(inActions, 'must be a string'))).optional(),
      started: playSeconds,
      position: playSeconds,
      total: playSeconds,
    },
    says(sentence(inActions, 'must be an object')),
  )
  .transform((value, context): EpisodeAction => {
    const { podcast, episode, action, timestamp, device, guid } = value;
    const parsed: { -readonly [K in keyof EpisodeAction]: EpisodeAction[K] } = { podcast, episode, action };
    if (timestamp !== undefined) parsed.timestamp = timestamp;
    if (device !== undefined) parsed.device = device;
    if (guid !== undefined) parsed.guid = guid;
    if (action !== 'play') return parsed;
    for (const field of PLAY_FIELDS) {
      const seconds = value[field];
      if (seconds === undefined) continue;
      if (PLAY_SECONDS.safeParse(seconds).success) parsed[field] = seconds as number;
      else
        context.addIssue({
          code: 'custom',
          input: seconds,
          path: [field],
          params: {
            message: sentence(inActions, `must be an integer from 0 to ${MAX_PLAY_SECONDS} (seconds)`),
          },
        });
    }
    return parsed;
  });

/** `POST /api/2/episodes/{user}.json`: a JSON list of actions, at most MAX_UPLOAD_URLS. */
export const EPISODE_ACTIONS = boundedList(
  EPISODE_ACTION,
  { max: MAX_UPLOAD_URLS },
  {
    type: 'the body must be a JSON list of episode actions',
    max: `the body must hold at most ${MAX_UPLOAD_URLS} episode actions`,
  },
);

export interface EpisodeActionsUpload {
  readonly actions: EpisodeAction[];
  /** `[sent, trimmed]` for each podcast URL sent with white space around it. */
  readonly updateUrls: [string, string][];
}

export function parseEpisodeActions(text: string): EpisodeActionsUpload {
  const body = parseJsonBody(text);
  const actions = parseWith(EPISODE_ACTIONS, body);
  const podcasts = (body as { podcast: unknown }[]).map((action) => action.podcast);
  return { actions, updateUrls: trimmedPairs(podcasts) };
}

const SYNCHRONIZE = says('synchronize must be a list of lists of device ids');
const STOP_SYNCHRONIZE = says('stop-synchronize must be a list of device ids');

/** `POST /api/2/sync-devices/{user}.json`: `{synchronize: [[device id]], "stop-synchronize":
 * [device id]}`, either left out, or an empty body. Checked for its shape only: every device of
 * a user is synchronized with every other, so the request changes nothing. Each list is checked for
 * its shape before its device ids. */
export const SYNC_REQUEST = z.object(
  {
    synchronize: z
      .array(z.array(z.unknown(), SYNCHRONIZE), SYNCHRONIZE)
      .pipe(z.array(z.array(deviceId('synchronize'))))
      .optional(),
    'stop-synchronize': z
      .array(z.unknown(), STOP_SYNCHRONIZE)
      .pipe(z.array(deviceId('stop-synchronize')))
      .optional(),
  },
  OBJECT_BODY,
);

export const parseSyncRequest = (text: string): void => {
  parseJsonBodyWith(SYNC_REQUEST, text, true);
};

/** A query parameter a settings scope needs: given exactly once, then read by `read`. */
const scopeParameter = <T extends z.ZodType<unknown, string>>(name: string, scope: string, read: T) =>
  z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? `the ${scope} scope needs the ${name} parameter`
          : `${name} must be given once`,
    })
    .pipe(read)
    .meta({ ...openApiSchema(read) });

/** A URL naming a podcast or an episode: kept as sent, 1 to MAX_SCOPE_URL_LENGTH characters. */
const scopeUrl = (name: string, description: string) => {
  const refused = says(`${name} must be 1 to ${MAX_SCOPE_URL_LENGTH} characters`);
  return z
    .string(refused)
    .min(1, refused)
    .max(MAX_SCOPE_URL_LENGTH, refused)
    .refine(
      (text) => !UNSTORABLE_TEXT.test(text),
      says(`${name} must not hold U+0000 or unpaired surrogates`),
    )
    .meta({ description, example: 'https://example.com/feed.xml' });
};

const PODCAST_URL =
  'The feed URL of the podcast, kept as sent (the scope is named by it, nothing is fetched)';

/** The query of each settings scope (other parameters are ignored, as gpodder.net ignores them). */
export const SETTINGS_SCOPE_QUERIES = {
  account: z.object({}),
  device: z.object({
    device: scopeParameter(
      'device',
      'device',
      deviceId('device').meta({
        description: 'The device id; a device not used before is created by this request',
        example: 'phone',
      }),
    ),
  }),
  podcast: z.object({ podcast: scopeParameter('podcast', 'podcast', scopeUrl('podcast', PODCAST_URL)) }),
  episode: z.object({
    podcast: scopeParameter('podcast', 'episode', scopeUrl('podcast', PODCAST_URL)),
    episode: scopeParameter(
      'episode',
      'episode',
      scopeUrl('episode', 'The media URL of the episode, kept as sent'),
    ),
  }),
} as const;

export type SettingsScopeKindOf = keyof typeof SETTINGS_SCOPE_QUERIES;

/** The scope a settings route names, with its query. */
export function parseSettingsScope(kind: SettingsScopeKindOf, query: Record<string, unknown>): SettingsScope {
  switch (kind) {
    case 'account':
      return { kind };
    case 'device':
      return { kind, deviceId: parseWith(SETTINGS_SCOPE_QUERIES.device, query).device };
    case 'podcast':
      return { kind, podcast: parseWith(SETTINGS_SCOPE_QUERIES.podcast, query).podcast };
    case 'episode': {
      const { podcast, episode } = parseWith(SETTINGS_SCOPE_QUERIES.episode, query);
      return { kind, podcast, episode };
    }
  }
}

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export interface SettingsUpdate {
  readonly set: Record<string, unknown>;
  readonly remove: string[];
}

/** `POST /api/2/settings/{user}/{scope}.json`: `{set: {key: any JSON}, remove: [key]}`, either left
 * out. At most MAX_SETTINGS_KEYS keys in each, keys of 1 to MAX_SETTING_KEY_LENGTH characters,
 * values of at most MAX_SETTING_VALUE_BYTES of JSON (`settingsRequestRefusal`); the body's depth is
 * every body's (MAX_BODY_DEPTH). */
export const SETTINGS_UPDATE = z
  .object(
    {
      // Not z.record: zod takes an object with a key `constructor` for no plain object.
      set: checked((value) => (isJsonObject(value) ? value : undefined), 'set must be an object of settings')
        .meta({
          type: 'object',
          additionalProperties: {},
          description:
            `Keys to set (1 to ${MAX_SETTING_KEY_LENGTH} characters, at most ${MAX_SETTINGS_KEYS}), ` +
            `each to any JSON value of at most ${MAX_SETTING_VALUE_BYTES} bytes`,
        })
        .optional(),
      remove: z
        .array(z.unknown(), says('remove must be a list of keys'))
        .meta({
          items: { type: 'string' },
          description: `Keys to remove (at most ${MAX_SETTINGS_KEYS}); a key also in set ends removed`,
        })
        .optional(),
    },
    OBJECT_BODY,
  )
  .meta({ example: { set: { public_subscriptions: false }, remove: ['flattr_token'] } })
  .transform(({ set = {}, remove = [] }, context): SettingsUpdate => {
    const refusal = settingsRequestRefusal(set, remove);
    if (refusal === undefined) return { set, remove: remove as string[] };
    context.addIssue({ code: 'custom', input: { set, remove }, message: refusal });
    return z.NEVER;
  });

export const parseSettingsUpdate = (text: string): SettingsUpdate =>
  parseJsonBodyWith(SETTINGS_UPDATE, text, false);
