import { Instant } from '../time';

/** A guid as stored: a lower-case UUID. */
export type Guid = string;
export type UserId = string;

/** One item of a POST as the client sent it. `feedUrl` and `guid` are kept raw: the decider
 * validates them, so the failure messages are part of the log's deterministic outcome.
 * `candidateGuid` is drawn by the API and used only when the item matches nothing. */
export interface AddItem {
  readonly feedUrl: unknown;
  readonly guid?: unknown;
  readonly candidateGuid: Guid;
}

export interface SubscriptionsAddRequested {
  readonly type: 'SubscriptionsAddRequested';
  readonly userId: UserId;
  readonly items: readonly AddItem[];
}

/** A PATCH whose fields the API has already checked for type (UUID, boolean, http(s) URL). */
export interface SubscriptionUpdateRequested {
  readonly type: 'SubscriptionUpdateRequested';
  readonly userId: UserId;
  readonly guid: Guid;
  readonly newFeedUrl?: string;
  readonly newGuid?: Guid;
  readonly isSubscribed?: boolean;
}

export interface DeletionRequested {
  readonly type: 'DeletionRequested';
  readonly userId: UserId;
  readonly guid: Guid;
}

/** Appended by the deletion saga after its transaction committed at `deletedAt`. */
export interface DeletionCompleted {
  readonly type: 'DeletionCompleted';
  readonly userId: UserId;
  readonly deletionId: number;
  readonly deletedAt: Instant;
}

/** Appended by the deletion saga after its transaction rolled back. */
export interface DeletionFailed {
  readonly type: 'DeletionFailed';
  readonly userId: UserId;
  readonly deletionId: number;
  readonly reason: string;
}

export type LogEvent =
  | SubscriptionsAddRequested
  | SubscriptionUpdateRequested
  | DeletionRequested
  | DeletionCompleted
  | DeletionFailed;

export type LogEventType = LogEvent['type'];

export const LOG_EVENT_TYPES: readonly LogEventType[] = [
  'SubscriptionsAddRequested',
  'SubscriptionUpdateRequested',
  'DeletionRequested',
  'DeletionCompleted',
  'DeletionFailed',
];

/** The schema version every event is written with. */
export const LOG_EVENT_VERSION = 1;

/** An event as read back from the log. `sequence` is unique across the log and derived from the
 * record's position only (offset × partitions + partition), so ids derived from it replay equal. */
export interface LoggedEvent<E extends LogEvent = LogEvent> {
  readonly event: E;
  readonly sequence: number;
}
