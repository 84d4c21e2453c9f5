import { Guid, LogEvent, LogEventType, SyncStatus } from '../events/log-event';
import { SyncId } from '../sync/ids';
import { Instant, Micros } from '../time';

export interface AddedItem {
  readonly feedUrl: string;
  readonly guid: Guid;
  readonly isSubscribed: boolean;
  readonly subscriptionChanged: Instant;
}

export interface FailedItem {
  readonly feedUrl: string;
  readonly message: string;
}

/** Only the fields a PATCH changed. */
export interface UpdatedFields {
  readonly newFeedUrl?: string;
  readonly isSubscribed?: boolean;
  readonly subscriptionChanged?: Instant;
  readonly newGuid?: Guid;
  readonly guidChanged?: Instant;
}

export interface AddedOutcome {
  readonly kind: 'Added';
  readonly success: readonly AddedItem[];
  readonly failure: readonly FailedItem[];
}

export interface UpdatedOutcome {
  readonly kind: 'Updated';
  readonly changed: UpdatedFields;
}

export interface DeletionAcceptedOutcome {
  readonly kind: 'DeletionAccepted';
  readonly deletionId: number;
}

export interface NotFoundOutcome {
  readonly kind: 'NotFound';
}

export interface GoneOutcome {
  readonly kind: 'Gone';
}

/** Saga results: nobody waits on them. */
export interface RecordedOutcome {
  readonly kind: 'Recorded';
}

/** A gpodder.net upload: the URLs the client should rewrite (`[sent, stored]`, or `[sent, ""]` for
 * one refused), and the user's clock after it, the instant its `timestamp` is taken from. */
export interface UploadedOutcome {
  readonly kind: 'Uploaded';
  readonly updateUrls: readonly (readonly [string, string])[];
  readonly clock: Instant;
}

export interface ActionsRecordedOutcome {
  readonly kind: 'ActionsRecorded';
  readonly clock: Instant;
}

export interface DeviceUpdatedOutcome {
  readonly kind: 'DeviceUpdated';
}

/** A subscription as the sync draft's face shows it. */
export interface SyncEntity {
  readonly syncId: SyncId;
  readonly guid: Guid;
  readonly feedUrl: string;
  readonly subscribedAt: Micros;
  readonly unsubscribedAt: Micros | null;
}

/** One action's result, in request order. `type`, `action` and `actionId` as sent (the JSON text
 * of a value that is not a string). `entity` is the subscription as the action left it (for a
 * retried action: as it is now); an action that reached none answers its `data` as sent. */
export interface SyncResult {
  readonly type: string;
  readonly action: string;
  readonly actionId: string;
  readonly status: SyncStatus;
  readonly reason?: string;
  readonly entity?: SyncEntity;
  readonly sentData?: unknown;
}

export interface SyncedOutcome {
  readonly kind: 'Synced';
  readonly results: readonly SyncResult[];
}

/** A feed move: the latest guids of the subscriptions moved (none when no subscription named held
 * the feed any more, or the new URL is refused: `refused` says why). */
export interface MovedOutcome {
  readonly kind: 'Moved';
  readonly moved: readonly Guid[];
  readonly refused?: string;
}

/** A settings change applied: the scope holds `keys` keys after it (the API answers the scope's
 * settings as the read model then holds them). */
export interface SettingsUpdatedOutcome {
  readonly kind: 'SettingsUpdated';
  readonly keys: number;
}

/** A settings change refused whole (a 400): it would leave the scope with more keys than
 * MAX_SETTINGS_KEYS, or breaks a bound of the request itself (`settingsRequestRefusal`). */
export interface SettingsRefusedOutcome {
  readonly kind: 'SettingsRefused';
  readonly message: string;
}

/** What the API answers for a request, stored with the read model in the same transaction.
 * 404 and 410 are values, not throws. */
export type RequestOutcome =
  | AddedOutcome
  | UpdatedOutcome
  | DeletionAcceptedOutcome
  | NotFoundOutcome
  | GoneOutcome
  | RecordedOutcome
  | UploadedOutcome
  | ActionsRecordedOutcome
  | DeviceUpdatedOutcome
  | SyncedOutcome
  | MovedOutcome
  | SettingsUpdatedOutcome
  | SettingsRefusedOutcome;

/** The outcomes each event type can decide: `decide`'s types and the API's check of a stored
 * outcome both read this one table. */
export const OUTCOME_KINDS = {
  SubscriptionsAddRequested: ['Added'],
  SubscriptionUpdateRequested: ['Updated', 'NotFound', 'Gone'],
  DeletionRequested: ['DeletionAccepted', 'NotFound'],
  DeletionCompleted: ['Recorded'],
  DeletionFailed: ['Recorded'],
  DeviceUpdateRequested: ['DeviceUpdated'],
  GpodderUploadRequested: ['Uploaded'],
  EpisodeActionsUploaded: ['ActionsRecorded'],
  SyncActionsPosted: ['Synced'],
  FeedMoved: ['Moved'],
  SettingsUpdateRequested: ['SettingsUpdated', 'SettingsRefused'],
} as const satisfies { readonly [T in LogEventType]: readonly RequestOutcome['kind'][] };

/** The outcome of the event `E`: a POST is answered `Added`, a PATCH `Updated`, `NotFound` or
 * `Gone`, and so on. */
export type OutcomeOf<E extends LogEvent> = Extract<
  RequestOutcome,
  { readonly kind: (typeof OUTCOME_KINDS)[E['type']][number] }
>;

/** Whether `outcome` is one that `event` can have: true of every outcome `decide` answers for it. */
export const isOutcomeOf = <E extends LogEvent>(event: E, outcome: RequestOutcome): outcome is OutcomeOf<E> =>
  (OUTCOME_KINDS[event.type] as readonly string[]).includes(outcome.kind);
