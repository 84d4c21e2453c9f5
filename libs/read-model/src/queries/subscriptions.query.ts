import { Instant } from '@castlog/domain';
import { DataSource } from 'typeorm';
import { ReadSchema } from '../projection-versions';
import { quoteIdent } from '../sql';

export interface SubscriptionView {
  readonly feedUrl: string;
  readonly guid: string;
  readonly isSubscribed: boolean;
  readonly subscriptionChanged: Instant;
  readonly guidChanged: Instant | null;
  readonly newGuid: string | null;
  readonly deleted: Instant | null;
}

/** Where a page ends in the listing's order: the change time and the guid shown of its last item.
 * The next page starts after it, so a change made between two pages, which moves its subscription
 * to the end, shifts nothing past it: every subscription still comes on a later page. */
export interface PageCursor {
  readonly changeTime: Instant;
  readonly guid: string;
}

export interface SubscriptionPage {
  readonly total: number;
  readonly items: readonly SubscriptionView[];
  /** The cursor after this page's last item when more follow it; absent on the last page. */
  readonly next?: PageCursor;
}

/** Which page of the listing: by number (`page`, counted from 1), or the `perPage` items after a
 * cursor. */
export interface PageRequest {
  readonly page: number;
  readonly perPage: number;
  readonly after?: PageCursor;
}

interface Row {
  id: string;
  feed_url: string;
  is_subscribed: boolean;
  subscription_changed: string;
  guid_changed: string | null;
  deleted: string | null;
  merged_into: string | null;
  latest_guid: string;
  shown_guid: string;
  change_time: string;
  total: string;
}

const num = (value: string | null): Instant | null => (value === null ? null : Number(value));

/** Read-side queries on the active projection's schema (read once per query, so one answer never
 * mixes two versions). */
export class SubscriptionsQuery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly readModel: ReadSchema,
  ) {}

  /** Subscriptions changed after `since` (all without it), ordered by change time then the guid
   * shown; `guid` is the guid the subscription had at `since` (its first without), `newGuid` its
   * latest guid, following merges. `total` counts every one, whichever page. */
  async list(userId: string, since: Instant | null, request: PageRequest): Promise<SubscriptionPage> {
    const s = quoteIdent(this.readModel.schema);
    const { rows, next } = await this.page(s, userId, since, request);
    const total = await this.totalOf(s, userId, since, request, rows);
    const latest = await this.latestGuids(
      s,
      userId,
      rows.filter((row) => row.merged_into !== null).map((row) => row.id),
    );
    return {
      total,
      ...(next ? { next } : {}),
      items: rows.map((row) => {
        const newest = latest.get(row.id) ?? row.latest_guid;
        return {
          feedUrl: row.feed_url,
          guid: row.shown_guid,
          isSubscribed: row.is_subscribed,
          subscriptionChanged: Number(row.subscription_changed),
          guidChanged: num(row.guid_changed),
          newGuid: newest === row.shown_guid ? null : newest,
          deleted: num(row.deleted),
        };
      }),
    };
  }

  /** One page of rows, each with the guid shown for `since` and the count of all; `next` is where
   * the following page starts, when one follows. */
  private async page(
    s: string,
    userId: string,
    since: Instant | null,
    { page, perPage, after }: PageRequest,
  ): Promise<{ rows: Row[]; next?: { changeTime: Instant; guid: string } }> {
    const shownGuid =
      since === null
        ? 'sub.id'
        : `coalesce((SELECT g.guid FROM ${s}.subscription_guids g
                      WHERE g.user_id = sub.user_id AND g.subscription_id = sub.id AND g.since <= $2
                      ORDER BY g.position DESC LIMIT 1), sub.id)`;
    // One row more than the page tells whether another page follows.
    const fetched: Row[] = await this.dataSource.query(
      `SELECT * FROM (
         SELECT sub.id, sub.feed_url, sub.is_subscribed, sub.subscription_changed, sub.guid_changed, sub.deleted,
                sub.merged_into, sub.latest_guid, ${shownGuid} AS shown_guid, sub.change_time,
                count(*) OVER () AS total
           FROM ${s}.subscriptions sub
          WHERE sub.user_id = $1 AND ($2::bigint IS NULL OR sub.change_time > $2::bigint)
       ) listed
        WHERE $5::bigint IS NULL OR (listed.change_time, listed.shown_guid) > ($5::bigint, $6::uuid)
        ORDER BY listed.change_time, listed.shown_guid
        LIMIT $3 OFFSET $4`,
      [
        userId,
        since,
        perPage + 1,
        after ? 0 : (page - 1) * perPage,
        after?.changeTime ?? null,
        after?.guid ?? null,
      ],
    );
    const rows = fetched.slice(0, perPage);
    const last = rows.at(-1);
    if (fetched.length <= perPage || !last) return { rows };
    return { rows, next: { changeTime: Number(last.change_time), guid: last.shown_guid } };
  }

  /** The count of every subscription changed after `since`: from the page's rows, or counted
   * alone when a page past the first came back empty. */
  private async totalOf(
    s: string,
    userId: string,
    since: Instant | null,
    { page, after }: PageRequest,
    rows: readonly Row[],
  ): Promise<number> {
    if (rows.length > 0 || (page <= 1 && !after)) return Number(rows[0]?.total ?? 0);
    const [count] = await this.dataSource.query(
      `SELECT count(*) AS total FROM ${s}.subscriptions WHERE user_id = $1 AND ($2::bigint IS NULL OR change_time > $2::bigint)`,
      [userId, since],
    );
    return Number(count?.total ?? 0);
  }

  /** For merged subscriptions: the latest guid of the subscription each one finally resolves to.
   * Merges never form a cycle (the decider follows them to their end before merging), and a chain
   * is as long as the merges made it, so it is followed to its end: the one not merged further. */
  private async latestGuids(s: string, userId: string, ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows: { start: string; latest_guid: string }[] = await this.dataSource.query(
      `WITH RECURSIVE chain(start, id) AS (
           SELECT id, id FROM unnest($2::uuid[]) AS id
           UNION
           SELECT c.start, sub.merged_into FROM chain c
             JOIN ${s}.subscriptions sub ON sub.user_id = $1 AND sub.id = c.id
            WHERE sub.merged_into IS NOT NULL
         )
       SELECT c.start, sub.latest_guid FROM chain c
         JOIN ${s}.subscriptions sub ON sub.user_id = $1 AND sub.id = c.id
        WHERE sub.merged_into IS NULL`,
      [userId, ids],
    );
    return new Map(rows.map((row) => [row.start, row.latest_guid]));
  }

  /** The subscription any of whose guids is `guid`, after merges; null when the user has none.
   * `guidChanged` is the latest guid change on the way from the guid's own subscription to the one
   * it resolves to (a merge is one): when what the guid resolves to last changed. */
  async get(userId: string, guid: string): Promise<SubscriptionView | null> {
    const s = quoteIdent(this.readModel.schema);
    const rows: (Omit<Row, 'shown_guid' | 'total'> & { chain_guid_changed: string | null })[] =
      await this.dataSource.query(
        `WITH RECURSIVE chain(id) AS (
             SELECT subscription_id FROM ${s}.subscription_guids WHERE user_id = $1 AND guid = $2
             UNION
             SELECT sub.merged_into FROM chain c
               JOIN ${s}.subscriptions sub ON sub.user_id = $1 AND sub.id = c.id
              WHERE sub.merged_into IS NOT NULL
           ),
           links AS (SELECT sub.* FROM chain c JOIN ${s}.subscriptions sub ON sub.user_id = $1 AND sub.id = c.id)
         SELECT links.*, (SELECT max(guid_changed) FROM links) AS chain_guid_changed
           FROM links WHERE links.merged_into IS NULL`,
        [userId, guid],
      );
    const row = rows[0];
    if (!row) return null;
    return {
      feedUrl: row.feed_url,
      guid,
      isSubscribed: row.is_subscribed,
      subscriptionChanged: Number(row.subscription_changed),
      guidChanged: num(row.chain_guid_changed),
      newGuid: row.latest_guid === guid ? null : row.latest_guid,
      deleted: num(row.deleted),
    };
  }
}
