import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import { Guid } from '../events/log-event';
import { checkFeedUrl, INVALID_GUID_MESSAGE, isGuid, normalizeGuid } from '../subscriptions/feed-url';
import { SyncResult } from '../subscriptions/outcome';
import { Instant, Micros, microsOf, parseRfc3339Micros } from '../time';
import { SyncId } from './ids';

/** The reasons a rejected action answers. A feed_url refused by the `/v1` rules answers the `/v1`
 * message (`Invalid URL`, `No protocol present`, `Unsupported protocol`); a guid, `Invalid guid`. */
export const SYNC_REASONS = {
  notAnObject: 'Action must be an object',
  unknownType: 'Unknown type',
  unknownAction: 'Unknown action',
  invalidActionId: 'action_id must be a UUID',
  invalidOccurredAt: 'occurred_at must be an RFC 3339 date-time with an offset, not before 1970',
  inTheFuture: "occurred_at is more than one hour ahead of the server's clock",
  dataNotAnObject: 'data must be an object',
  invalidSyncId: 'sync_id must be a UUID',
  invalidGuid: INVALID_GUID_MESSAGE,
  nothingToUpdate: 'update needs feed_url or guid',
  notFound: 'Entity not found',
  feedUrlTaken: 'feed_url belongs to another subscription',
  guidTaken: 'guid belongs to another subscription',
  actionIdReused: 'action_id was sent before with another action',
} as const;

/** How many actions one request may hold (CONTRACT: 1 to 30). */
export const MAX_SYNC_ACTIONS = 30;

/** How far ahead of castlog's clock an `occurred_at` may be (CONTRACT: one hour), in Micros. */
export const MAX_AHEAD: Micros = 3_600_000_000;

export const ACTION_KINDS = ['subscribe', 'unsubscribe', 'update'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

/** What every well-formed action has: an object with a known type and action and a UUID action_id.
 * `fingerprint` tells a retry of it from another action sent with the same action_id. */
export interface ActionHead {
  readonly index: number;
  readonly raw: Record<string, unknown>;
  readonly actionId: string;
  readonly fingerprint: string;
  readonly echo: Pick<SyncResult, 'type' | 'action' | 'actionId'>;
  readonly sentData: Record<string, unknown>;
  /** Its `occurred_at` when that is valid: actions apply in this order. */
  readonly occurredAt: Micros | undefined;
}

export type SyncAction =
  | {
      readonly kind: 'subscribe';
      readonly feedUrl: string;
      readonly normalized: string;
      readonly guid?: Guid;
    }
  | { readonly kind: 'unsubscribe'; readonly syncId: SyncId }
  | {
      readonly kind: 'update';
      readonly syncId: SyncId;
      readonly feedUrl?: { readonly sent: string; readonly normalized: string };
      readonly guid?: Guid;
    };

/** A JSON value as text for the echo fields: a string as is, anything else as its JSON. */
const asText = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined ? '' : (JSON.stringify(value) ?? String(value));

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keys sorted at every depth: the same action sent with its keys in another order is the same. */
export const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : isObject(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, canonical(value[key])]),
        )
      : value;

const fingerprintOf = (type: unknown, action: unknown, data: unknown): string =>
  bytesToHex(sha256(utf8ToBytes(JSON.stringify(canonical({ type, action, data })) ?? '')));

/** The head of the action at `index`, or the result that rejects it without reading the state (no
 * action_id to remember it by). */
export const readHead = (raw: unknown, index: number): ActionHead | SyncResult => {
  const fields = isObject(raw) ? raw : {};
  const echo = {
    type: asText(fields.type),
    action: asText(fields.action),
    actionId: asText(fields.action_id),
  };
  const reject = (reason: string): SyncResult => ({
    ...echo,
    status: 'rejected',
    reason,
    sentData: isObject(fields.data) ? fields.data : {},
  });
  if (!isObject(raw)) return reject(SYNC_REASONS.notAnObject);
  if (!isGuid(raw.action_id)) return reject(SYNC_REASONS.invalidActionId);
  return {
    index,
    raw,
    actionId: normalizeGuid(raw.action_id),
    fingerprint: fingerprintOf(raw.type, raw.action, raw.data),
    echo,
    sentData: isObject(raw.data) ? raw.data : {},
    occurredAt: parseRfc3339Micros(raw.occurred_at),
  };
};

/** The action's type, action, time and data checked against the contract, given castlog's
 * instant `now`: the action and its `occurred_at`, or the reason it is rejected. */
export const readBody = (
  raw: Record<string, unknown>,
  now: Instant,
): { readonly action: SyncAction; readonly occurredAt: Micros } | { readonly reason: string } => {
  if (raw.type !== 'subscription') return { reason: SYNC_REASONS.unknownType };
  if (!(ACTION_KINDS as readonly unknown[]).includes(raw.action))
    return { reason: SYNC_REASONS.unknownAction };
  const occurredAt = parseRfc3339Micros(raw.occurred_at);
  if (occurredAt === undefined) return { reason: SYNC_REASONS.invalidOccurredAt };
  if (occurredAt > microsOf(now) + MAX_AHEAD) return { reason: SYNC_REASONS.inTheFuture };
  if (!isObject(raw.data)) return { reason: SYNC_REASONS.dataNotAnObject };
  const action = readData(raw.action as ActionKind, raw.data);
  return 'reason' in action ? action : { action, occurredAt };
};

/** A guid field: absent or null is none, a UUID its stored form, anything else refused. */
const readGuid = (value: unknown): { guid?: Guid } | { reason: string } =>
  value === undefined || value === null
    ? {}
    : isGuid(value)
      ? { guid: normalizeGuid(value) }
      : { reason: SYNC_REASONS.invalidGuid };

const readData = (kind: ActionKind, data: Record<string, unknown>): SyncAction | { reason: string } => {
  if (kind !== 'subscribe' && !isGuid(data.sync_id)) return { reason: SYNC_REASONS.invalidSyncId };
  const guid = readGuid(data.guid);
  if ('reason' in guid) return guid;
  if (kind === 'unsubscribe') return { kind, syncId: normalizeGuid(data.sync_id as string) };
  if (kind === 'subscribe') {
    const feedUrl = checkFeedUrl(data.feed_url);
    if (!feedUrl.ok) return { reason: feedUrl.message };
    return { kind, feedUrl: feedUrl.feedUrl, normalized: feedUrl.normalized, ...guid };
  }
  if (data.feed_url === undefined && guid.guid === undefined) return { reason: SYNC_REASONS.nothingToUpdate };
  const syncId = normalizeGuid(data.sync_id as string);
  if (data.feed_url === undefined) return { kind, syncId, ...guid };
  const feedUrl = checkFeedUrl(data.feed_url);
  if (!feedUrl.ok) return { reason: feedUrl.message };
  return { kind, syncId, feedUrl: { sent: feedUrl.feedUrl, normalized: feedUrl.normalized }, ...guid };
};
