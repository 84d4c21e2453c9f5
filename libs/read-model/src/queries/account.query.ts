import { DeletionStatus, Instant, LogEvent, RequestOutcome } from '@castlog/domain';
import { DataSource } from 'typeorm';
import { ReadSchema } from '../projection-versions';
import { poolRows, quoteIdent } from '../sql';
import { EpisodeActionView } from './gpodder.query';

/** A subscription as a person sees it on their page: by its latest guid, with the status of a
 * deletion asked for and not yet finished. */
export interface AccountSubscription {
  readonly guid: string;
  readonly feedUrl: string;
  readonly isSubscribed: boolean;
  readonly changed: Instant;
  readonly deletion: DeletionStatus | null;
}

export interface SubscriptionFilter {
  /** Part of the feed URL, in any case. */
  readonly text: string;
  /** Normalised feed URLs that also match (those whose title holds the text). */
  readonly urls: readonly string[];
}

export interface Listing<T> {
  readonly total: number;
  readonly items: readonly T[];
}

export interface EpisodeActionEntry extends EpisodeActionView {
  /** When castlog received it. */
  readonly receivedAt: Instant;
}

/** A change the log holds for the user, as its stored outcome tells it. */
export interface AccountChange {
  readonly type: LogEvent['type'];
  readonly instant: Instant;
  readonly requestId: string;
  readonly outcome: RequestOutcome;
}

/** What a person's own pages read: their subscriptions newest change first, and their latest
 * episode actions, a page at a time. */
export class AccountQuery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly readModel: ReadSchema,
  ) {}

  /** Subscriptions not merged into another and not deleted (a pending deletion is listed with its
   * status), newest change first; `filter` keeps those whose URL or title holds its text. */
  async subscriptions(
    userId: string,
    filter: SubscriptionFilter | null,
    page: { offset: number; limit: number },
  ): Promise<Listing<AccountSubscription>> {
    const s = quoteIdent(this.readModel.schema);
    const rows = await poolRows<{
      latest_guid: string;
      feed_url: string;
      is_subscribed: boolean;
      change_time: string;
      status: DeletionStatus | null;
      total: string;
    }>(
      this.dataSource,
      `SELECT sub.latest_guid, sub.feed_url, sub.is_subscribed, sub.change_time, d.status,
              count(*) OVER () AS total
         FROM ${s}.subscriptions sub
         LEFT JOIN ${s}.deletions d ON d.deletion_id = sub.deletion_id AND d.status <> 'SUCCESS'
        WHERE sub.user_id = $1 AND sub.merged_into IS NULL AND sub.deleted IS NULL
          AND ($2::text IS NULL OR strpos(lower(sub.feed_url), lower($2)) > 0
               OR EXISTS (SELECT 1 FROM ${s}.subscription_feed_urls u
                           WHERE u.user_id = sub.user_id AND u.subscription_id = sub.id
                             AND u.normalized_feed_url = ANY($3::text[])))
        ORDER BY sub.change_time DESC, sub.id
        LIMIT $4 OFFSET $5`,
      [userId, filter?.text ?? null, filter?.urls ?? [], page.limit, page.offset],
    );
    return {
      total: Number(rows[0]?.total ?? (page.offset > 0 ? await this.countSubscriptions(userId, filter) : 0)),
      items: rows.map((row) => ({
        guid: row.latest_guid,
        feedUrl: row.feed_url,
        isSubscribed: row.is_subscribed,
        changed: Number(row.change_time),
        deletion: row.status,
      })),
    };
  }

  /** The count `subscriptions` gives, for a page past the end. */
  private async countSubscriptions(userId: string, filter: SubscriptionFilter | null): Promise<number> {
    const { total } = await this.subscriptions(userId, filter, { offset: 0, limit: 1 });
    return total;
  }

  /** Episode actions, the latest received first. */
  async episodeActions(
    userId: string,
    page: { offset: number; limit: number },
  ): Promise<Listing<EpisodeActionEntry>> {
    const s = quoteIdent(this.readModel.schema);
    const rows = await poolRows<EpisodeActionView & { received_at: string; listed: string }>(
      this.dataSource,
      `SELECT podcast, episode, action, "timestamp", device, guid, started, position, total, received_at,
              count(*) OVER () AS listed
         FROM ${s}.episode_actions WHERE user_id = $1
        ORDER BY received_at DESC, sequence DESC, ordinal DESC
        LIMIT $2 OFFSET $3`,
      [userId, page.limit, page.offset],
    );
    return {
      total: Number(rows[0]?.listed ?? 0),
      items: rows.map(({ received_at, listed: _listed, ...action }) => ({
        ...action,
        receivedAt: Number(received_at),
      })),
    };
  }

  /** The user's latest changes (the requests the projection applied), newest first. */
  async latestChanges(userId: string, limit: number): Promise<AccountChange[]> {
    const s = quoteIdent(this.readModel.schema);
    const rows = await poolRows<{
      event_type: LogEvent['type'];
      instant: string;
      request_id: string;
      outcome: RequestOutcome;
    }>(
      this.dataSource,
      `SELECT event_type, instant, request_id, outcome FROM ${s}.request_outcomes
        WHERE user_id = $1 ORDER BY partition DESC, "offset" DESC LIMIT $2`,
      [userId, limit],
    );
    return rows.map((row) => ({
      type: row.event_type,
      instant: Number(row.instant),
      requestId: row.request_id,
      outcome: row.outcome,
    }));
  }

  /** Each user's count of subscribed feeds (users without any are absent). */
  async subscribedCounts(): Promise<Map<string, number>> {
    const s = quoteIdent(this.readModel.schema);
    const rows = await poolRows<{ user_id: string; subscribed: string }>(
      this.dataSource,
      `SELECT user_id, count(*) AS subscribed FROM ${s}.subscriptions
        WHERE is_subscribed AND deleted IS NULL AND merged_into IS NULL GROUP BY user_id`,
      [],
    );
    return new Map(rows.map((row) => [row.user_id, Number(row.subscribed)]));
  }
}
