import { Guid } from '../events/log-event';
import { Instant } from '../time';

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

/** What the API answers for a request, stored with the read model in the same transaction.
 * 404 and 410 are values, not throws. */
export type RequestOutcome =
  | {
      readonly kind: 'Added';
      readonly success: readonly AddedItem[];
      readonly failure: readonly FailedItem[];
    }
  | { readonly kind: 'Updated'; readonly changed: UpdatedFields }
  | { readonly kind: 'DeletionAccepted'; readonly deletionId: number }
  | { readonly kind: 'NotFound' }
  | { readonly kind: 'Gone' }
  /** Saga results: nobody waits on them. */
  | { readonly kind: 'Recorded' };
