import { AddItem } from '@castlog/domain';
import type { PageCursor } from '@castlog/read-model';
import { randomUUID } from 'node:crypto';
import { z } from 'zod/v4';
import { dateTime, feedUrl, guid, parseBody, positiveInteger, queryParameter } from '../http/parse';
import { at, boundedList, checked, parseWith, says, sentence } from '../http/schema';

export const MAX_ITEMS = 1000;
export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 100;

/** One item of a POST: `feed_url` and `guid` are kept as sent, the decider judges them (failure
 * items); only the request's shape fails the whole request. Each item carries a fresh candidate
 * guid, used only when it matches nothing, so a replay draws the same one. */
const NEW_ITEM = z
  .object(
    {
      feed_url: z.unknown().meta({ type: 'string', format: 'url', example: 'https://example.com/feed.xml' }),
      guid: z.unknown().meta({ type: 'string', format: 'uuid' }).optional(),
    },
    says(sentence(at, 'must be an object')),
  )
  .transform(({ feed_url: feedUrl, guid }): AddItem =>
    guid === undefined
      ? { feedUrl, candidateGuid: randomUUID() }
      : { feedUrl, candidateGuid: randomUUID(), guid },
  );

/** `POST /v1/subscriptions`. */
export const ADD_SUBSCRIPTIONS = z.object({
  subscriptions: boundedList(
    NEW_ITEM,
    { min: 1, max: MAX_ITEMS },
    {
      type: 'subscriptions must be an array',
      min: 'subscriptions must not be empty',
      max: `subscriptions must hold at most ${MAX_ITEMS} items`,
    },
  ),
});

/** POST body → event items. */
export const parseAddItems = (body: unknown): AddItem[] => parseBody(ADD_SUBSCRIPTIONS, body).subscriptions;

export interface UpdateFields {
  newFeedUrl?: string;
  newGuid?: string;
  isSubscribed?: boolean;
}

/** `PATCH /v1/subscriptions/{guid}`: at least one of the fields. */
export const UPDATE_SUBSCRIPTION = z
  .object({
    new_feed_url: feedUrl('new_feed_url').optional(),
    new_guid: guid('new_guid').optional(),
    is_subscribed: z.boolean(says('is_subscribed must be a boolean')).optional(),
  })
  .transform((fields, context): UpdateFields => {
    const update: UpdateFields = {};
    if (fields.new_feed_url !== undefined) update.newFeedUrl = fields.new_feed_url;
    if (fields.new_guid !== undefined) update.newGuid = fields.new_guid;
    if (fields.is_subscribed !== undefined) update.isSubscribed = fields.is_subscribed;
    if (Object.keys(update).length === 0)
      context.addIssue({
        code: 'custom',
        input: fields,
        message: 'the body must hold new_feed_url, new_guid or is_subscribed',
      });
    return update;
  });

export const parseUpdate = (body: unknown): UpdateFields => parseBody(UPDATE_SUBSCRIPTION, body);

export interface ListQuery {
  readonly since: number | null;
  readonly sinceText?: string;
  readonly page: number;
  readonly perPage: number;
  readonly after?: PageCursor;
}

/** A `next` link's `after`: the change time (ms) and the guid of the last item before it. */
const CURSOR = /^(\d{1,15})_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export const formatCursor = (cursor: PageCursor): string => `${cursor.changeTime}_${cursor.guid}`;

/** `GET /v1/subscriptions`. */
export const LIST_QUERY = z.object({
  since: queryParameter('since', dateTime('since')),
  page: queryParameter('page', positiveInteger('page')).default(1),
  per_page: queryParameter(
    'per_page',
    positiveInteger('per_page').meta({
      description: `Values above ${MAX_PER_PAGE} are served as ${MAX_PER_PAGE} and reported as such.`,
    }),
  ).default(DEFAULT_PER_PAGE),
  after: queryParameter(
    'after',
    checked((value) => {
      const match = typeof value === 'string' ? CURSOR.exec(value) : null;
      return match ? { changeTime: Number(match[1]), guid: match[2]! } : undefined;
    }, 'after must be the value a next link carries').meta({
      type: 'string',
      pattern: '^[0-9]{1,15}_[0-9a-f-]{36}$',
      description:
        "Set by `next` links: the page starts after the previous page's last item (its change time and guid), " +
        'so that a change made between two pages shifts nothing past it. Takes precedence over `page`.',
    }),
  ),
});

export function parseListQuery(query: Record<string, unknown>): ListQuery {
  const { since, page, per_page: perPage, after } = parseWith(LIST_QUERY, query);
  return {
    since: since ?? null,
    ...(typeof query.since === 'string' ? { sinceText: query.since } : {}),
    page,
    perPage: Math.min(perPage, MAX_PER_PAGE),
    ...(after ? { after } : {}),
  };
}
