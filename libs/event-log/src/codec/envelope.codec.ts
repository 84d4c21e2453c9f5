import {
  DEVICE_TYPES,
  EPISODE_ACTION_KINDS,
  FEED_MOVE_CAUSES,
  isDeviceId,
  LOG_EVENT_TYPES,
  LOG_EVENT_VERSION,
  LogEvent,
  LogEventType,
  MAX_SCOPE_URL_LENGTH,
  MAX_SETTING_KEY_LENGTH,
  MAX_SETTINGS_KEYS,
  MAX_SYNC_ACTIONS,
} from '@castlog/domain';
import Ajv, { ValidateFunction } from 'ajv';
import type { EventEnvelope, LogRecord } from '../event-log.port';
import {
  Accepted,
  anyOf,
  anything,
  boolean,
  constant,
  Exact,
  integer,
  list,
  object,
  oneOf,
  record,
  Shape,
  string,
} from './typed-schema';

/** The largest play field (`started`, `position`, `total`, in seconds) of an episode action: the
 * read model stores them as PostgreSQL `integer`. */
export const MAX_PLAY_SECONDS = 2 ** 31 - 1;
/** The largest gpodder.net upload: a simple-API PUT of a 10,000-feed OPML file is one event. */
export const MAX_UPLOAD_URLS = 10_000;
/** The most actions one sync request carries (CONTRACT: 1 to 30). */

const guid = string({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
});
const userId = string({ minLength: 1 });
const deviceId = string({ format: 'device-id' });
/** A Client-ID as the API passes it on: a UUID version 4, lower-case, as the read model's `uuid`
 * column gives it back (an upper-case one would read back otherwise than the decider kept it). */
const clientId = string({
  pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$',
});
const count = integer({ minimum: 0 });
const seconds = integer({ minimum: 0, maximum: MAX_PLAY_SECONDS });
/** `feedUrl` and `guid` are kept raw: the decider validates them (see AddItem). */
const addItem = object({ candidateGuid: guid }, { feedUrl: anything(), guid: anything() });

/** A gpodder.net settings scope: its kind and the parts that name it. */
const scopeUrl = string({ minLength: 1, maxLength: MAX_SCOPE_URL_LENGTH });
const settingsScope = anyOf(
  object({ kind: constant('account') }),
  object({ kind: constant('device'), deviceId }),
  object({ kind: constant('podcast'), podcast: scopeUrl }),
  object({ kind: constant('episode'), podcast: scopeUrl, episode: scopeUrl }),
);
const settingKey = { minLength: 1, maxLength: MAX_SETTING_KEY_LENGTH };

/** An event of `type`: the type, the user and the properties given (see `object`). */
const event = <const T extends LogEventType, R extends Shape, O extends Shape = Record<never, never>>(
  type: T,
  required: R,
  optional?: O,
) => object({ type: constant(type), userId, ...required }, optional);

/** The JSON Schema of each event value, checked when writing and when reading. Each is typed with
 * the values it accepts, which must be exactly the domain's type of that event (`NO_DRIFT`). */
const EVENT_SCHEMAS = {
  SubscriptionsAddRequested: event('SubscriptionsAddRequested', {
    items: list(addItem, { minItems: 1, maxItems: 1000 }),
  }),
  SubscriptionUpdateRequested: event(
    'SubscriptionUpdateRequested',
    { guid },
    { newFeedUrl: string(), newGuid: guid, isSubscribed: boolean() },
  ),
  DeletionRequested: event('DeletionRequested', { guid }),
  DeletionCompleted: event('DeletionCompleted', { deletionId: count, deletedAt: count }),
  DeletionFailed: event('DeletionFailed', { deletionId: count, reason: string() }),
  DeviceUpdateRequested: event(
    'DeviceUpdateRequested',
    { deviceId },
    { caption: string(), deviceType: oneOf(DEVICE_TYPES) },
  ),
  GpodderUploadRequested: event(
    'GpodderUploadRequested',
    {
      deviceId,
      add: list(addItem, { maxItems: MAX_UPLOAD_URLS }),
      remove: list(anything(), { maxItems: MAX_UPLOAD_URLS }),
    },
    { replace: boolean() },
  ),
  EpisodeActionsUploaded: event('EpisodeActionsUploaded', {
    actions: list(
      object(
        { podcast: string(), episode: string(), action: oneOf(EPISODE_ACTION_KINDS) },
        {
          timestamp: string({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$' }),
          device: deviceId,
          guid: string(),
          started: seconds,
          position: seconds,
          total: seconds,
        },
      ),
      { maxItems: MAX_UPLOAD_URLS },
    ),
  }),
  /** The actions as sent, any JSON: the decider judges each (a malformed one is `rejected`). */
  SyncActionsPosted: event('SyncActionsPosted', {
    clientId,
    actions: list(anything(), { minItems: 1, maxItems: MAX_SYNC_ACTIONS }),
  }),
  /** Values are any JSON; their size is the decider's to judge (`settingsRequestRefusal`). */
  SettingsUpdateRequested: event('SettingsUpdateRequested', {
    scope: settingsScope,
    set: record(anything(), { maxProperties: MAX_SETTINGS_KEYS, propertyNames: settingKey }),
    remove: list(string(settingKey), { maxItems: MAX_SETTINGS_KEYS }),
  }),
  /** `newFeedUrl` as the feed or its redirect named it: the decider judges it as a client's. */
  FeedMoved: event('FeedMoved', {
    feedUrl: string({ minLength: 1 }),
    newFeedUrl: string(),
    cause: oneOf(FEED_MOVE_CAUSES),
    guids: list(guid, { minItems: 1, maxItems: 1000 }),
  }),
} as const;

/** The event types whose schema accepts other values than the domain's type says: none, or the
 * compiler refuses `NO_DRIFT` below, naming them (exported only so that it is not unused). */
type Drifted = {
  [K in LogEventType]: Exact<Accepted<(typeof EVENT_SCHEMAS)[K]>, Extract<LogEvent, { type: K }>> extends true
    ? never
    : K;
}[LogEventType];
export const NO_DRIFT: [Drifted] extends [never] ? true : Drifted = true;

/** One compiled validator per event type: ajv writes each schema out as code once, which checks a
 * POST of 100 feeds in about a sixth of the time zod's walk of its schema objects took. */
const validators: Record<LogEventType, ValidateFunction> = (() => {
  const ajv = new Ajv({ strict: true, allErrors: false });
  ajv.addFormat('device-id', { type: 'string', validate: isDeviceId });
  return Object.fromEntries(
    LOG_EVENT_TYPES.map((type) => [type, ajv.compile(EVENT_SCHEMAS[type].json)]),
  ) as Record<LogEventType, ValidateFunction>;
})();

export class MalformedEventError extends Error {}

/** U+0000 or a UTF-16 surrogate without its pair: PostgreSQL text and jsonb cannot hold either. */
export const UNSTORABLE_TEXT =
  // eslint-disable-next-line no-control-regex -- U+0000 is what it looks for
  /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What `unstorablePart` finds: a string or a key holding UNSTORABLE_TEXT, a number JSON cannot
 * write (JSON.parse reads `1e400` as Infinity, which JSON.stringify would write as null), an object
 * nested deeper than `refuse.depth`, or the key `refuse.key`. */
export type UnstorablePart = 'string' | 'key' | 'number' | 'depth' | 'refused key';

/** The first part of `value`, walked depth first, that PostgreSQL cannot store (UNSTORABLE_TEXT in
 * a string or a key) or the log cannot keep as it is (a number that is not finite), or that `refuse` names (castlog's API also refuses bodies nested too deep and
 * `__proto__` keys); undefined when there is none. */
export function unstorablePart(
  value: unknown,
  refuse: { readonly depth?: number; readonly key?: string } = {},
): UnstorablePart | undefined {
  const maxDepth = refuse.depth ?? Number.POSITIVE_INFINITY;
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [part, depth] = next;
    if (typeof part === 'string') {
      if (UNSTORABLE_TEXT.test(part)) return 'string';
    } else if (typeof part === 'number') {
      if (!Number.isFinite(part)) return 'number';
    } else if (typeof part === 'object' && part !== null) {
      if (depth >= maxDepth) return 'depth';
      for (const [key, item] of Object.entries(part)) {
        if (UNSTORABLE_TEXT.test(key)) return 'key';
        if (key === refuse.key) return 'refused key';
        pending.push([item, depth + 1]);
      }
    }
  }
  return undefined;
}

export interface EventHeaders {
  readonly type: string;
  readonly version: number;
  readonly eventId: string;
  readonly requestId: string;
}

/** Text in which JSON could write an unstorable string: UNSTORABLE_TEXT itself, or an escape of
 * U+0000 or of any surrogate (paired or not, escaped or not: this only decides whether to look
 * closer). */
const MAYBE_UNSTORABLE_JSON = new RegExp(`${UNSTORABLE_TEXT.source}|\\\\u(?:0000|[dD][89a-fA-F])`);

/** Checks an event against its schema and the header type. `text`: the value as JSON, when the
 * caller has it (as read from the log, or as about to be written); it spares a walk of the value
 * when it holds nothing that could write an unstorable string. */
export function checkEvent(headers: EventHeaders, value: unknown, text?: string): LogEvent {
  if (!(LOG_EVENT_TYPES as readonly string[]).includes(headers.type)) {
    throw new MalformedEventError(`unknown event type ${headers.type}`);
  }
  if (headers.version !== LOG_EVENT_VERSION) {
    throw new MalformedEventError(`${headers.type} version ${headers.version} is not supported`);
  }
  const validate = validators[headers.type as LogEventType];
  if (!validate(value)) {
    const [error] = validate.errors ?? [];
    throw new MalformedEventError(
      `${headers.type} does not match its schema: ${error ? `${error.instancePath || 'value'} ${error.message}` : 'invalid'}`,
    );
  }
  // The read model stores every string of an event (the outcome echoes what was sent): one it
  // cannot store would stop the projection at that event, so no producer may append it.
  const storable =
    (text !== undefined && !MAYBE_UNSTORABLE_JSON.test(text)) || unstorablePart(value) === undefined;
  if (!storable || UNSTORABLE_TEXT.test(headers.requestId)) {
    throw new MalformedEventError(
      `${headers.type} holds a string with U+0000 or an unpaired surrogate, which the read model cannot store`,
    );
  }
  return value as LogEvent;
}

export const encodeValue = (value: LogEvent): string => JSON.stringify(value);

/** An envelope on its way into a log: its value encoded once, and the bytes it adds to a batch. */
export interface EncodedEnvelope {
  readonly envelope: EventEnvelope;
  readonly value: string;
  /** The value's UTF-8 bytes and about 200 for the headers and the key. */
  readonly bytes: number;
}

/** Encodes an envelope's value and checks the event with that text (`checkEvent`), which then need
 * not walk the value. Both logs append the text encoded here. */
export function encodeEnvelope(envelope: EventEnvelope): EncodedEnvelope {
  const value = encodeValue(envelope.value);
  checkEvent(envelope, envelope.value, value);
  // Bytes, not UTF-16 units: a batch of multi-byte values must stay under its log's limit.
  return { envelope, value, bytes: Buffer.byteLength(value) + 200 };
}

export const decodeValue = (headers: EventHeaders, text: string): LogEvent =>
  checkEvent(headers, JSON.parse(text), text);

/** Where a log keeps a record, beside its headers and value. */
export interface StoredAt {
  readonly key: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
}

/** A record as both logs read it back: its value decoded and checked (`decodeValue`), its fields
 * written out one by one. Not `{ ...headers, key, … }`: an object spread followed by properties
 * the source lacks took V8's slow path (about 1 µs an object on Node 20, against 20 ns for this
 * literal), and every record of every catch-up and replay is built here. */
export function decodeRecord(headers: EventHeaders, text: string, at: StoredAt): LogRecord {
  const value = decodeValue(headers, text);
  return {
    key: at.key,
    type: value.type,
    version: headers.version,
    eventId: headers.eventId,
    requestId: headers.requestId,
    value,
    partition: at.partition,
    offset: at.offset,
    timestamp: at.timestamp,
  };
}
