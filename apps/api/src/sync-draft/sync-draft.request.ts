import { isGuid, MAX_SYNC_ACTIONS, Micros, normalizeGuid, parseRfc3339Micros, SyncId } from '@castlog/domain';
import { z } from 'zod/v4';
import { guid, parseBody, queryParameter, readDateTime } from '../http/parse';
import { boundedList, checked, parseWith, says } from '../http/schema';
import { SUBSCRIPTION_ACTION_SCHEMA } from './sync-draft.openapi';

// The sync draft's input (CONTRACT, "The Open Podcast API sync draft"): the Client-ID header, the
// POST body's shape, the queries and the path's sync_id. Every refusal is a ValidationFailed, which
// the face's routes answer 400 (SyncDraftRoute). The actions themselves are judged one by one by
// the decider: a bad action is a `rejected` result, not a refused request.

/** The most actions one POST /api/v1/sync carries (the draft's batch limit). */
export const MAX_LIMIT = 1000;
export const DEFAULT_SYNC_LIMIT = 50;
export const DEFAULT_SUBSCRIPTIONS_LIMIT = 30;

/** A UUID of version 4 with RFC 9562's variant, in any case. */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** The `Client-ID` header: a UUID version 4, read lower-case. */
export const CLIENT_ID = checked(
  (value) => (typeof value === 'string' && UUID_V4.test(value) ? value.toLowerCase() : undefined),
  'the Client-ID header must be a UUID version 4',
).meta({
  type: 'string',
  format: 'uuid',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$',
});

export const parseClientId = (value: unknown): string => parseWith(CLIENT_ID, value);

/** `POST /api/v1/sync`: 1 to 30 actions, each kept as sent (the decider judges it). */
export const POST_SYNC = z.object(
  {
    requests: boundedList(
      z.unknown().meta(SUBSCRIPTION_ACTION_SCHEMA as Record<string, unknown>),
      { min: 1, max: MAX_SYNC_ACTIONS },
      {
        type: 'requests must be an array',
        min: 'requests must not be empty',
        max: `requests must hold at most ${MAX_SYNC_ACTIONS} actions`,
      },
    ),
  },
  says('requests must be an array'),
);

export const parsePostSync = (body: unknown): unknown[] => parseBody(POST_SYNC, body).requests;

/** `limit`: an integer from 1 to 1000, `fallback` when absent. */
const limit = (fallback: number) =>
  queryParameter(
    'limit',
    checked(
      (value) =>
        typeof value === 'string' && /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= MAX_LIMIT
          ? Number(value)
          : undefined,
      `limit must be an integer from 1 to ${MAX_LIMIT}`,
    ).meta({ type: 'integer', minimum: 1, maximum: MAX_LIMIT }),
  ).default(fallback);

/** `true` or `false`, false when absent. */
const flag = (name: string, description: string) =>
  queryParameter(
    name,
    checked(
      (value) => (value === 'true' ? true : value === 'false' ? false : undefined),
      `${name} must be true or false`,
    ).meta({ type: 'boolean', description }),
  ).default(false);

/** A `since` with an offset, to the microsecond. One before 1970, which the draft's clocks do not
 * hold (Go's zero time, say), is the beginning. A `+` left unencoded in a query string reads as a
 * space: ` hh:mm` is read as `+hh:mm`, as on /v1. */
export const readSince = (value: unknown): Micros | undefined => {
  if (typeof value !== 'string') return undefined;
  const text = value.replace(/ (\d{2}:\d{2})$/, '+$1');
  const micros = parseRfc3339Micros(text);
  if (micros !== undefined || !/([Zz]|[+-]\d{2}:\d{2})$/.test(text)) return micros;
  const millis = readDateTime(text);
  return millis === undefined ? undefined : Math.max(0, millis * 1000);
};

/** The entities `include` may name: both are the subscriptions, the only entity castlog syncs. */
const INCLUDABLE = ['all', 'subscriptions'];

/** `GET /api/v1/sync`. */
export const SYNC_QUERY = z.object({
  since: queryParameter(
    'since',
    checked(readSince, 'since must be an RFC 3339 date-time with an offset').meta({
      type: 'string',
      format: 'date-time',
      description:
        'Changes castlog applied after this instant (exclusive); take it from next_since. Absent: from the beginning.',
    }),
  ),
  limit: limit(DEFAULT_SYNC_LIMIT),
  include: queryParameter(
    'include',
    checked(
      (value) =>
        typeof value === 'string' && value.split(',').every((entity) => INCLUDABLE.includes(entity))
          ? value
          : undefined,
      'include must be all or subscriptions (comma-separated)',
    ).meta({ type: 'string', pattern: '^(all|subscriptions)(,(all|subscriptions))*$' }),
  ).default('all'),
  include_own: flag(
    'include_own',
    "Whether to list entities whose last change came from this request's Client-ID",
  ),
});

export interface SyncQueryParameters {
  readonly since: Micros | null;
  readonly limit: number;
  readonly includeOwn: boolean;
}

export const parseSyncQuery = (query: Record<string, unknown>): SyncQueryParameters => {
  const { since, limit, include_own: includeOwn } = parseWith(SYNC_QUERY, query);
  return { since: since ?? null, limit, includeOwn };
};

/** `GET /api/v1/subscriptions`. */
export const SUBSCRIPTIONS_QUERY = z.object({
  include_unsubscribed: flag('include_unsubscribed', 'Whether to list unsubscribed entities too'),
  since: queryParameter(
    'since',
    checked(
      (value) => (isGuid(value) ? normalizeGuid(value) : undefined),
      'since must be the value a next link carries',
    ).meta({
      type: 'string',
      description: 'An opaque cursor: the `since` of a `next` link. Absent: from the first entity.',
    }),
  ),
  limit: limit(DEFAULT_SUBSCRIPTIONS_LIMIT),
});

export interface SubscriptionsQueryParameters {
  readonly after: SyncId | null;
  readonly limit: number;
  readonly includeUnsubscribed: boolean;
}

export const parseSubscriptionsQuery = (query: Record<string, unknown>): SubscriptionsQueryParameters => {
  const { since, limit, include_unsubscribed: includeUnsubscribed } = parseWith(SUBSCRIPTIONS_QUERY, query);
  return { after: since ?? null, limit, includeUnsubscribed };
};

/** A path sync_id: a UUID, read lower-case. One that is not a UUID is input that fails validation
 * (400), as a path guid that is not one is on /v1 (405 there); the draft's schema declares the
 * parameter a UUID. A UUID the user has no entity for is 404. */
export const SYNC_ID_PARAMETER = guid('sync_id');
