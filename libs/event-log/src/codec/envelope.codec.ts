import {
  DEVICE_TYPES,
  EPISODE_ACTION_KINDS,
  isDeviceId,
  LOG_EVENT_TYPES,
  LOG_EVENT_VERSION,
  LogEvent,
  LogEventType,
} from '@castlog/domain';
import { z } from 'zod';

const guid = z.string().uuid();
const userId = z.string().min(1);
const deviceId = z.string().refine(isDeviceId, 'not a device id');
/** The largest play field (`started`, `position`, `total`, in seconds) of an episode action: the
 * read model stores them as PostgreSQL `integer`. */
export const MAX_PLAY_SECONDS = 2 ** 31 - 1;
const seconds = z.number().int().nonnegative().max(MAX_PLAY_SECONDS);
const addItem = z.object({ feedUrl: z.unknown(), guid: z.unknown().optional(), candidateGuid: guid });
/** The largest gpodder.net upload: a simple-API PUT of a 10,000-feed OPML file is one event. */
export const MAX_UPLOAD_URLS = 10_000;

/** The JSON schema of each event value, checked when writing and when reading. */
const eventSchemas: Record<LogEventType, z.ZodType<LogEvent>> = {
  SubscriptionsAddRequested: z.object({
    type: z.literal('SubscriptionsAddRequested'),
    userId,
    items: z.array(addItem).min(1).max(1000),
  }),
  SubscriptionUpdateRequested: z.object({
    type: z.literal('SubscriptionUpdateRequested'),
    userId,
    guid,
    newFeedUrl: z.string().optional(),
    newGuid: guid.optional(),
    isSubscribed: z.boolean().optional(),
  }),
  DeletionRequested: z.object({ type: z.literal('DeletionRequested'), userId, guid }),
  DeletionCompleted: z.object({
    type: z.literal('DeletionCompleted'),
    userId,
    deletionId: z.number().int().nonnegative(),
    deletedAt: z.number().int().nonnegative(),
  }),
  DeletionFailed: z.object({
    type: z.literal('DeletionFailed'),
    userId,
    deletionId: z.number().int().nonnegative(),
    reason: z.string(),
  }),
  DeviceUpdateRequested: z.object({
    type: z.literal('DeviceUpdateRequested'),
    userId,
    deviceId,
    caption: z.string().optional(),
    deviceType: z.enum(DEVICE_TYPES).optional(),
  }),
  GpodderUploadRequested: z.object({
    type: z.literal('GpodderUploadRequested'),
    userId,
    deviceId,
    add: z.array(addItem).max(MAX_UPLOAD_URLS),
    remove: z.array(z.unknown()).max(MAX_UPLOAD_URLS),
    replace: z.boolean().optional(),
  }),
  EpisodeActionsUploaded: z.object({
    type: z.literal('EpisodeActionsUploaded'),
    userId,
    actions: z
      .array(
        z.object({
          podcast: z.string(),
          episode: z.string(),
          action: z.enum(EPISODE_ACTION_KINDS),
          timestamp: z
            .string()
            .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
            .optional(),
          device: deviceId.optional(),
          guid: z.string().optional(),
          started: seconds.optional(),
          position: seconds.optional(),
          total: seconds.optional(),
        }),
      )
      .max(MAX_UPLOAD_URLS),
  }),
} as Record<LogEventType, z.ZodType<LogEvent>>;

export class MalformedEventError extends Error {}

/** U+0000 or a UTF-16 surrogate without its pair: PostgreSQL text and jsonb cannot hold either. */
export const UNSTORABLE_TEXT =
  // eslint-disable-next-line no-control-regex -- U+0000 is what it looks for
  /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether no string and no key anywhere in `value` holds UNSTORABLE_TEXT. */
export function isStorable(value: unknown): boolean {
  const pending: unknown[] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next === 'string') {
      if (UNSTORABLE_TEXT.test(next)) return false;
    } else if (typeof next === 'object' && next !== null) {
      for (const [key, item] of Object.entries(next)) {
        if (UNSTORABLE_TEXT.test(key)) return false;
        pending.push(item);
      }
    }
  }
  return true;
}

export interface EventHeaders {
  readonly type: string;
  readonly version: number;
  readonly eventId: string;
  readonly requestId: string;
}

/** Checks an event against its schema and the header type. */
export function checkEvent(headers: EventHeaders, value: unknown): LogEvent {
  if (!(LOG_EVENT_TYPES as readonly string[]).includes(headers.type)) {
    throw new MalformedEventError(`unknown event type ${headers.type}`);
  }
  if (headers.version !== LOG_EVENT_VERSION) {
    throw new MalformedEventError(`${headers.type} version ${headers.version} is not supported`);
  }
  const parsed = eventSchemas[headers.type as LogEventType].safeParse(value);
  if (!parsed.success || (parsed.data as LogEvent).type !== headers.type) {
    throw new MalformedEventError(
      `${headers.type} does not match its schema: ${parsed.error?.message ?? 'type'}`,
    );
  }
  // The read model stores every string of an event (the outcome echoes what was sent): one it
  // cannot store would stop the projection at that event, so no producer may append it.
  if (!isStorable(value) || UNSTORABLE_TEXT.test(headers.requestId)) {
    throw new MalformedEventError(
      `${headers.type} holds a string with U+0000 or an unpaired surrogate, which the read model cannot store`,
    );
  }
  return value as LogEvent;
}

export const encodeValue = (value: LogEvent): string => JSON.stringify(value);

export const decodeValue = (headers: EventHeaders, text: string): LogEvent =>
  checkEvent(headers, JSON.parse(text));
