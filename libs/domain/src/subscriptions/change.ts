import { EpisodeAction, Guid, UserId } from '../events/log-event';
import { Instant, Micros } from '../time';
import { Deletion, Device, ScopeSettings, SeenAction, Subscription } from './subscription';

/** What a decision changes. Each kind maps to one set-based statement per batch, and a replay
 * folds the same values with `evolve`. Rows are whole: a later change of the same key in one
 * batch supersedes an earlier one. */
export type Change =
  | { readonly kind: 'SubscriptionSaved'; readonly subscription: Subscription }
  /** An entry of a guid chain, as the saved subscription holds it: `byGuid` in the state, a row of
   * the view `subscription_guids` in SQL (where the first entry is the subscription's own row). */
  | {
      readonly kind: 'GuidRecorded';
      readonly userId: UserId;
      readonly guid: Guid;
      readonly subscriptionId: Guid;
      readonly since: Instant;
      /** Its index in the subscription's chain. */
      readonly position: number;
    }
  | {
      readonly kind: 'FeedUrlRecorded';
      readonly userId: UserId;
      readonly normalizedFeedUrl: string;
      readonly subscriptionId: Guid;
      /** The subscription is created with it, so no subscription had it before (a feed_url, once
       * mapped, maps to a subscription for good): the read model keeps it on the subscription's row. */
      readonly atCreation: boolean;
    }
  | { readonly kind: 'DeletionSaved'; readonly deletion: Deletion }
  /** The user's clocks after the decision: the instant of the requests, and the sync cursor when
   * the decision assigned one. */
  | {
      readonly kind: 'ClockAdvanced';
      readonly userId: UserId;
      readonly lastInstant: Instant;
      readonly syncClock?: Micros;
    }
  /** A sync action judged for the first time, with its result. */
  | { readonly kind: 'ActionSeen'; readonly action: SeenAction }
  | { readonly kind: 'DeviceSaved'; readonly device: Device }
  /** A settings scope's whole row, every key it holds after the change (none: an empty one). */
  | { readonly kind: 'SettingsSaved'; readonly settings: ScopeSettings }
  /** Episode actions as recorded, each with its timestamp: a read-model table of their own, which
   * no decision reads back (the state does not hold them). `sequence` is the upload's. */
  | {
      readonly kind: 'EpisodeActionsRecorded';
      readonly userId: UserId;
      readonly sequence: number;
      readonly receivedAt: Instant;
      readonly actions: readonly (EpisodeAction & { readonly timestamp: string })[];
    };
