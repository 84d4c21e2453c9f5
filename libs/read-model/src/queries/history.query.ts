import { RequestOutcome } from '@castlog/domain';
import { ReadSchema } from '../projection-versions';
import { quoteIdent, Sql } from '../sql';

/** A request's stored outcome, by its position in the log. */
export interface StoredOutcome {
  readonly partition: number;
  readonly offset: string;
  readonly outcome: RequestOutcome;
  readonly instant: string;
}

/** Everything the read model knows of one subscription and of those merged into it. */
export interface SubscriptionFamily {
  readonly guids: string[] | null;
  readonly feed_urls: string[] | null;
  /** The feed_url each of them holds now, as stored (not normalised). */
  readonly current_feed_urls: string[] | null;
  readonly deletion_ids: string[] | null;
  /** Their sync_ids, and the sync actions seen that acted on one of them. */
  readonly sync_ids: string[] | null;
  readonly action_ids: string[] | null;
}

/** What `castlog history` reads of the read model: a user's stored outcomes, and the family of a
 * subscription. */
export class HistoryQuery {
  constructor(
    private readonly sql: Sql,
    private readonly readModel: ReadSchema,
  ) {}

  /** Every outcome stored for the user's requests. */
  outcomes(userId: string): Promise<StoredOutcome[]> {
    const s = quoteIdent(this.readModel.schema);
    return this.sql.query<StoredOutcome>(
      `SELECT partition, "offset", outcome, instant FROM ${s}.request_outcomes WHERE user_id = $1`,
      [userId],
    );
  }

  /** The position of the user's first applied request (a user's requests are all in one partition). */
  async firstApplied(userId: string): Promise<{ partition: number; offset: string } | undefined> {
    const [first] = await this.sql.query<{ partition: number; offset: string }>(
      `SELECT partition, min("offset") AS offset FROM ${quoteIdent(this.readModel.schema)}.request_outcomes
        WHERE user_id = $1 GROUP BY partition ORDER BY partition LIMIT 1`,
      [userId],
    );
    return first;
  }

  /** The guids, normalised feed URLs (those mapping to them, and those they hold now), deletion
   * ids, sync_ids and the sync actions that acted on them, of the subscription `guid` (normalised)
   * resolves to, following merges, and of the subscriptions merged into it. */
  async family(userId: string, guid: string): Promise<SubscriptionFamily | undefined> {
    const s = quoteIdent(this.readModel.schema);
    const [family] = await this.sql.query<SubscriptionFamily>(
      `WITH RECURSIVE up(id) AS (
           SELECT subscription_id FROM ${s}.subscription_guids WHERE user_id = $1 AND guid = $2
           UNION
           SELECT sub.merged_into FROM up
             JOIN ${s}.subscriptions sub ON sub.user_id = $1 AND sub.id = up.id
            WHERE sub.merged_into IS NOT NULL
         ),
         final AS (SELECT sub.id FROM up JOIN ${s}.subscriptions sub ON sub.user_id = $1 AND sub.id = up.id
                    WHERE sub.merged_into IS NULL),
         family(id) AS (
           SELECT id FROM final
           UNION
           SELECT sub.id FROM family
             JOIN ${s}.subscriptions sub ON sub.user_id = $1 AND sub.merged_into = family.id
         )
       SELECT (SELECT array_agg(guid::text) FROM ${s}.subscription_guids
                WHERE user_id = $1 AND subscription_id IN (SELECT id FROM family)) AS guids,
              (SELECT array_agg(normalized_feed_url) FROM ${s}.subscription_feed_urls
                WHERE user_id = $1 AND subscription_id IN (SELECT id FROM family)) AS feed_urls,
              (SELECT array_agg(feed_url) FROM ${s}.subscriptions
                WHERE user_id = $1 AND id IN (SELECT id FROM family)) AS current_feed_urls,
              (SELECT array_agg(deletion_id::text) FROM ${s}.deletions
                WHERE user_id = $1 AND subscription_id IN (SELECT id FROM family)) AS deletion_ids,
              (SELECT array_agg(sync_id::text) FROM ${s}.subscriptions
                WHERE user_id = $1 AND id IN (SELECT id FROM family)) AS sync_ids,
              (SELECT array_agg(action_id::text) FROM ${s}.sync_actions
                WHERE user_id = $1 AND subscription_id IN (SELECT id FROM family)) AS action_ids`,
      [userId, guid],
    );
    return family;
  }
}
