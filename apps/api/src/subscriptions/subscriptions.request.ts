import { AddItem } from '@castlog/domain';
import type { PageCursor } from '@castlog/read-model';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { randomUUID } from 'node:crypto';
import { ValidationFailed } from '../http/errors';
import {
  isObject,
  parseBodyObject,
  parseDateTime,
  parseFeedUrl,
  parseGuid,
  parsePositiveInteger,
} from '../http/parse';

export const MAX_ITEMS = 1000;
export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 100;

export class NewSubscriptionItem {
  @ApiProperty({ format: 'url', example: 'https://example.com/feed.xml' }) feed_url!: string;
  @ApiPropertyOptional({ format: 'uuid' }) guid?: string;
}

export class AddSubscriptionsRequest {
  @ApiProperty({ type: [NewSubscriptionItem], minItems: 1, maxItems: MAX_ITEMS })
  subscriptions!: NewSubscriptionItem[];
}

export class UpdateSubscriptionRequest {
  @ApiPropertyOptional({ format: 'url' }) new_feed_url?: string;
  @ApiPropertyOptional({ format: 'uuid' }) new_guid?: string;
  @ApiPropertyOptional() is_subscribed?: boolean;
}

/** POST body → event items. Item contents are judged by the decider (failure items); only the
 * request's shape fails the whole request. Each item carries a fresh candidate guid, used only
 * when it matches nothing, so a replay draws the same one. */
export function parseAddItems(body: unknown): AddItem[] {
  const { subscriptions } = parseBodyObject(body);
  if (!Array.isArray(subscriptions)) throw new ValidationFailed('subscriptions must be an array');
  if (subscriptions.length === 0) throw new ValidationFailed('subscriptions must not be empty');
  if (subscriptions.length > MAX_ITEMS) {
    throw new ValidationFailed(`subscriptions must hold at most ${MAX_ITEMS} items`);
  }
  return subscriptions.map((item, index) => {
    if (!isObject(item)) throw new ValidationFailed(`subscriptions[${index}] must be an object`);
    const feedUrl = item.feed_url;
    const candidateGuid = randomUUID();
    return 'guid' in item && item.guid !== undefined
      ? { feedUrl, candidateGuid, guid: item.guid }
      : { feedUrl, candidateGuid };
  });
}

export interface UpdateFields {
  newFeedUrl?: string;
  newGuid?: string;
  isSubscribed?: boolean;
}

export function parseUpdate(body: unknown): UpdateFields {
  const fields = parseBodyObject(body);
  const update: UpdateFields = {};
  if (fields.new_feed_url !== undefined)
    update.newFeedUrl = parseFeedUrl(fields.new_feed_url, 'new_feed_url');
  if (fields.new_guid !== undefined) update.newGuid = parseGuid(fields.new_guid, 'new_guid');
  if (fields.is_subscribed !== undefined) {
    if (typeof fields.is_subscribed !== 'boolean')
      throw new ValidationFailed('is_subscribed must be a boolean');
    update.isSubscribed = fields.is_subscribed;
  }
  if (Object.keys(update).length === 0) {
    throw new ValidationFailed('the body must hold new_feed_url, new_guid or is_subscribed');
  }
  return update;
}

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

function parseCursor(value: unknown): PageCursor | undefined {
  if (value === undefined) return undefined;
  const match = typeof value === 'string' ? CURSOR.exec(value) : null;
  if (!match) throw new ValidationFailed('after must be the value a next link carries');
  return { changeTime: Number(match[1]), guid: match[2]! };
}

export function parseListQuery(query: Record<string, unknown>): ListQuery {
  const single = (name: string): unknown => {
    const value = query[name];
    if (Array.isArray(value)) throw new ValidationFailed(`${name} must be given once`);
    return value;
  };
  const sinceText = single('since');
  const since = parseDateTime(sinceText, 'since');
  const page = parsePositiveInteger(single('page'), 'page') ?? 1;
  const perPage = Math.min(
    parsePositiveInteger(single('per_page'), 'per_page') ?? DEFAULT_PER_PAGE,
    MAX_PER_PAGE,
  );
  const after = parseCursor(single('after'));
  return {
    since: since ?? null,
    ...(typeof sinceText === 'string' ? { sinceText } : {}),
    page,
    perPage,
    ...(after ? { after } : {}),
  };
}
