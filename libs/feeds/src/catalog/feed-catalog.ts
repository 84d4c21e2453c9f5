import { normalizeFeedUrl } from '@castlog/domain';
import { poolRows, quoteIdent, ReadSchema } from '@castlog/read-model';
import { DataSource } from 'typeorm';
import { FeedInfo } from '../parse/feed-parser';

/** What a feed says about itself, as the catalog keeps it: what the parser reads but where it moved. */
export type FeedMetadata = Omit<FeedInfo, 'newFeedUrl'>;

/** HTTP validators of a feed's last full answer, for a conditional GET. */
export interface FeedValidators {
  readonly etag?: string;
  readonly lastModified?: string;
}

/** A feed claimed for fetching: its normalised URL, its validators and how many fetches in a row
 * have failed. */
export interface DueFeed extends FeedValidators {
  readonly url: string;
  readonly failures: number;
}

/** What a fetch ended with. `fetched` and `not-modified` succeeded (the first with what the feed
 * said); any other outcome is a failure, with its detail, that counts towards the backoff. */
export type FetchRecord =
  | {
      readonly outcome: 'fetched';
      readonly metadata: FeedMetadata;
      readonly validators: FeedValidators;
      readonly movedTo?: string;
    }
  | { readonly outcome: 'not-modified'; readonly validators: FeedValidators; readonly movedTo?: string }
  | { readonly outcome: string; readonly detail: string };

const FEEDS = 'castlog_feeds.feeds';
const OFFSETS = 'castlog_feeds.log_offsets';

/** Epoch ms as a timestamptz parameter. */
const AT = (param: string) => `to_timestamp(${param}::float8 / 1000)`;

/** Whether a subscription not deleted (of the user `userParam`, of anyone without it) holds the
 * normalised feed URL `url`: was created with it or took it later. Written as two indexed lookups
 * rather than through the read model's `subscription_feed_urls` view, whose plan for a user's
 * whole list the planner can misjudge. */
function held(readModel: ReadSchema, url: string, userParam?: string): string {
  const s = quoteIdent(readModel.schema);
  const ofUser = (column: string) => (userParam === undefined ? '' : `${column} = ${userParam} AND `);
  return `(EXISTS (SELECT 1 FROM ${s}.subscriptions created
                    WHERE ${ofUser('created.user_id')}created.created_feed_url = ${url} AND created.deleted IS NULL)
        OR EXISTS (SELECT 1 FROM ${s}.subscription_later_feed_urls later
                     JOIN ${s}.subscriptions sub ON sub.user_id = later.user_id AND sub.id = later.subscription_id
                    WHERE ${ofUser('later.user_id')}later.normalized_feed_url = ${url} AND sub.deleted IS NULL))`;
}

/** The feed catalog (`castlog_feeds`, migration FeedCatalog1732400000012): feeds keyed by their
 * normalised URL, learned from the log, fetched when due. Claims are leases: a claimed feed's next
 * fetch moves `leaseMs` ahead, so replicas never fetch it together and a crash loses nothing. The
 * read model (`readModel`'s schema) tells which feeds someone subscribes to. Times are epoch ms. */
export class FeedCatalog {
  constructor(
    private readonly dataSource: DataSource,
    private readonly readModel: ReadSchema,
  ) {}

  /** The rows `text` answers, on the pool itself: `DataSource.query` answers an UPDATE's or a
   * DELETE's rows with their count. */
  private query<T>(text: string, params: unknown[]): Promise<T[]> {
    return poolRows<T>(this.dataSource, text, params);
  }

  /** The next offset in `partition` the catalog has not learned from (0 at first). */
  async learnedUpTo(partition: number): Promise<number> {
    const rows = await this.query<{ next_offset: string }>(
      `SELECT next_offset FROM ${OFFSETS} WHERE partition = $1`,
      [partition],
    );
    return Number(rows[0]?.next_offset ?? 0);
  }

  /** Adds the normalised feed URLs not yet known, due at `nowMs`, and stores `nextOffset` as the
   * partition's learned position, in one statement. Answers how many feeds were new. */
  async learn(
    urls: readonly string[],
    nowMs: number,
    partition: number,
    nextOffset: number,
  ): Promise<number> {
    const rows = await this.query<{ added: string }>(
      `WITH added AS (
         INSERT INTO ${FEEDS} (url, next_fetch_at, first_seen)
         SELECT DISTINCT url, ${AT('$2')}, ${AT('$2')} FROM unnest($1::text[]) AS learned (url)
         ON CONFLICT (url) DO NOTHING
         RETURNING 1
       ), stored AS (
         INSERT INTO ${OFFSETS} (partition, next_offset) VALUES ($3, $4)
         ON CONFLICT (partition) DO UPDATE SET next_offset = GREATEST(${OFFSETS}.next_offset, EXCLUDED.next_offset)
       )
       SELECT count(*) AS added FROM added`,
      [[...urls], nowMs, partition, nextOffset],
    );
    return Number(rows[0]?.added ?? 0);
  }

  /** Claims at most `limit` feeds due at `nowMs`, the longest due first, for `leaseMs`. */
  async claimDue(nowMs: number, limit: number, leaseMs: number): Promise<DueFeed[]> {
    const rows = await this.query<{
      url: string;
      etag: string | null;
      last_modified: string | null;
      failures: number;
    }>(
      `UPDATE ${FEEDS} f SET next_fetch_at = ${AT('$1')} + $3 * interval '1 millisecond'
           FROM (SELECT url FROM ${FEEDS} WHERE next_fetch_at <= ${AT('$1')}
                  ORDER BY next_fetch_at LIMIT $2 FOR UPDATE SKIP LOCKED) due
          WHERE f.url = due.url
          RETURNING f.url, f.etag, f.last_modified, f.failures`,
      [nowMs, limit, leaseMs],
    );
    return rows.map((row) => ({
      url: row.url,
      failures: row.failures,
      ...(row.etag === null ? {} : { etag: row.etag }),
      ...(row.last_modified === null ? {} : { lastModified: row.last_modified }),
    }));
  }

  /** Records a fetch of `url` at `nowMs` and schedules the next at `nextFetchAtMs`. A success resets
   * the failures; a failure keeps what the feed said before and forgets its validators, so that
   * the next fetch reads it whole. Answers the failures in a row now. */
  async record(url: string, result: FetchRecord, nowMs: number, nextFetchAtMs: number): Promise<number> {
    const common = [url, nowMs, nextFetchAtMs];
    const sql =
      result.outcome === 'fetched' && 'metadata' in result
        ? this.recordFetched(result.metadata, result.validators, result.movedTo)
        : result.outcome === 'not-modified' && 'validators' in result
          ? this.recordNotModified(result.validators, result.movedTo)
          : this.recordFailure(result.outcome, 'detail' in result ? result.detail : '');
    const rows = await this.query<{ failures: number }>(
      `UPDATE ${FEEDS} SET fetched_at = ${AT('$2')}, next_fetch_at = ${AT('$3')}, ${sql.set}
        WHERE url = $1 RETURNING failures`,
      [...common, ...sql.params],
    );
    return rows[0]?.failures ?? 0;
  }

  private recordFetched(metadata: FeedMetadata, validators: FeedValidators, movedTo?: string) {
    return {
      set: `outcome = 'fetched', outcome_detail = NULL, failures = 0, title = $4, description = $5,
            link = $6, image_url = $7, language = $8, author = $9, podcast_guid = $10, episode_count = $11,
            newest_episode_at = ${AT('$12')}, etag = $13, last_modified = $14, moved_to = $15`,
      params: [
        metadata.title ?? null,
        metadata.description ?? null,
        metadata.link ?? null,
        metadata.imageUrl ?? null,
        metadata.language ?? null,
        metadata.author ?? null,
        metadata.podcastGuid ?? null,
        metadata.episodeCount,
        metadata.newestEpisodeAt?.getTime() ?? null,
        validators.etag ?? null,
        validators.lastModified ?? null,
        movedTo ?? null,
      ],
    };
  }

  private recordNotModified(validators: FeedValidators, movedTo?: string) {
    return {
      set: `outcome = 'not-modified', outcome_detail = NULL, failures = 0,
            etag = coalesce($4, etag), last_modified = coalesce($5, last_modified),
            moved_to = coalesce($6, moved_to)`,
      params: [validators.etag ?? null, validators.lastModified ?? null, movedTo ?? null],
    };
  }

  private recordFailure(outcome: string, detail: string) {
    return {
      set: `outcome = $4, outcome_detail = $5, failures = failures + 1, etag = NULL, last_modified = NULL`,
      params: [outcome, detail],
    };
  }

  /** The catalog's titles of `urls` (as given, any spelling of a feed) that `userId` subscribes to
   * (a subscription of theirs, not deleted, holds the URL): the catalog shows nobody a feed URL they
   * do not hold, since a private feed's URL carries its token. */
  async titlesFor(userId: string, urls: readonly string[]): Promise<Map<string, string>> {
    if (urls.length === 0) return new Map();
    const rows = await this.query<{ url: string; title: string }>(
      `SELECT f.url, f.title FROM (SELECT DISTINCT url FROM unnest($2::text[]) AS asked (url)) asked
         JOIN ${FEEDS} f ON f.url = asked.url
        WHERE f.title IS NOT NULL AND f.title <> '' AND ${held(this.readModel, 'f.url', '$1')}`,
      [userId, urls.map(normalizeFeedUrl)],
    );
    const titles = new Map(rows.map((row) => [row.url, row.title]));
    return new Map(
      urls.flatMap((url) => {
        const title = titles.get(normalizeFeedUrl(url));
        return title === undefined ? [] : [[url, title] as const];
      }),
    );
  }

  /** The catalog's titles of `urls` (any spelling), keyed as given, without asking who holds them:
   * only for URLs the caller read from the subscriptions of the user it shows them to (a page of
   * that user's own list), which `titlesFor` would check again for nothing. */
  async titlesOfHeld(urls: readonly string[]): Promise<Map<string, string>> {
    if (urls.length === 0) return new Map();
    const normalized = urls.map(normalizeFeedUrl);
    const rows = await this.query<{ url: string; title: string }>(
      `SELECT url, title FROM ${FEEDS} WHERE url = ANY($1::text[]) AND title IS NOT NULL AND title <> ''`,
      [[...new Set(normalized)]],
    );
    const titles = new Map(rows.map((row) => [row.url, row.title]));
    return new Map(
      urls.flatMap((url, i) => {
        const title = titles.get(normalized[i]!);
        return title === undefined ? [] : [[url, title] as const];
      }),
    );
  }

  /** The normalised URLs of the feeds `userId` subscribes to whose title holds `text` in any case
   * (at most 1000): what a filter by name matches besides URLs. */
  async urlsTitled(userId: string, text: string): Promise<string[]> {
    const rows = await this.query<{ url: string }>(
      `SELECT f.url FROM ${FEEDS} f
        WHERE strpos(lower(f.title), lower($2)) > 0 AND ${held(this.readModel, 'f.url', '$1')}
        LIMIT 1000`,
      [userId, text],
    );
    return rows.map((row) => row.url);
  }

  /** `urls` in order, each with its title when the catalog knows it and `userId` subscribes to it
   * (`titlesFor`): what an export names each feed by. */
  async withTitles(userId: string, urls: readonly string[]): Promise<{ url: string; title?: string }[]> {
    const titles = await this.titlesFor(userId, urls);
    return urls.map((url) => {
      const title = titles.get(url);
      return title === undefined ? { url } : { url, title };
    });
  }

  /** The subscriptions (of any user, not deleted, not merged into another) whose feed_url is `url`
   * (normalised) now, by user: those a move of the feed applies to. Found through the URLs they
   * hold (created with, or took later), then kept only when their current URL is still `url`. */
  async subscriptionsOn(url: string): Promise<Map<string, string[]>> {
    const s = quoteIdent(this.readModel.schema);
    const rows = await this.query<{ user_id: string; id: string; feed_url: string }>(
      `SELECT sub.user_id, sub.id, sub.feed_url FROM ${s}.subscriptions sub
        WHERE sub.created_feed_url = $1 AND sub.deleted IS NULL AND sub.merged_into IS NULL
       UNION
       SELECT sub.user_id, sub.id, sub.feed_url FROM ${s}.subscription_later_feed_urls later
         JOIN ${s}.subscriptions sub ON sub.user_id = later.user_id AND sub.id = later.subscription_id
        WHERE later.normalized_feed_url = $1 AND sub.deleted IS NULL AND sub.merged_into IS NULL`,
      [url],
    );
    const byUser = new Map<string, string[]>();
    for (const row of rows) {
      if (normalizeFeedUrl(row.feed_url) !== url) continue;
      byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), row.id]);
    }
    return byUser;
  }

  /** Where the catalog last saw the feed `url` (normalised) move to, if anywhere. */
  async movedTo(url: string): Promise<string | undefined> {
    const rows = await this.query<{ moved_to: string | null }>(
      `SELECT moved_to FROM ${FEEDS} WHERE url = $1`,
      [url],
    );
    return rows[0]?.moved_to ?? undefined;
  }

  /** Removes the feeds first seen before `seenBeforeMs` that no subscription (of any user, not
   * deleted) holds any more. The grace period spares a feed learned from an event the projector has
   * not applied yet. Answers how many left. */
  async sweep(seenBeforeMs: number): Promise<number> {
    const rows = await this.query<{ url: string }>(
      `DELETE FROM ${FEEDS} f WHERE f.first_seen < ${AT('$1')} AND NOT ${held(this.readModel, 'f.url')}
        RETURNING f.url`,
      [seenBeforeMs],
    );
    return rows.length;
  }

  /** How many feeds the catalog knows, and since when (epoch ms) the longest due one has waited at
   * `nowMs` (none: null). */
  async backlog(nowMs: number): Promise<{ known: number; due: number; oldestDueMs: number | null }> {
    const [row] = await this.query<{ known: string; due: string; oldest: string | null }>(
      `SELECT count(*) AS known, count(*) FILTER (WHERE next_fetch_at <= ${AT('$1')}) AS due,
              (extract(epoch FROM min(next_fetch_at) FILTER (WHERE next_fetch_at <= ${AT('$1')})) * 1000)::bigint AS oldest
         FROM ${FEEDS}`,
      [nowMs],
    );
    return {
      known: Number(row?.known ?? 0),
      due: Number(row?.due ?? 0),
      oldestDueMs: row?.oldest == null ? null : Number(row.oldest),
    };
  }
}
