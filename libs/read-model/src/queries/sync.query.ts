import { Micros, SyncEntity, SyncId } from '@castlog/domain';
import { DataSource } from 'typeorm';
import { ReadSchema } from '../projection-versions';
import { poolRows, quoteIdent } from '../sql';

// What the sync draft's face reads (CONTRACT, "The Open Podcast API sync draft"): the user's
// subscriptions as entities, by sync_id, and the changes after a sync cursor. Every statement is
// scoped to the user and served by one of the subscriptions table's indexes on (user_id, sync_id)
// and (user_id, sync_cursor).

/** An entity as the sync listing shows a change: its state now, when its last change happened
 * (`occurred_at`, or castlog's instant for the other faces) and its cursor. */
export interface SyncChange {
  readonly entity: SyncEntity;
  readonly lastUpdated: Micros;
  readonly cursor: Micros;
}

export interface SyncChangesRequest {
  /** Changes with a cursor strictly greater; all without it. */
  readonly since: Micros | null;
  readonly limit: number;
  /** Leave out entities whose last change came from this Client-ID (`include_own=false`). */
  readonly excludeClientId: string | null;
}

export interface SyncChangesPage {
  /** At most `limit`, oldest cursor first. */
  readonly changes: readonly SyncChange[];
  /** Whether more changes follow the last one. */
  readonly hasMore: boolean;
  /** With `since`: the cursor after which the `limit` changes before this page lie, or null when
   * fewer lie before it (the page before starts at the beginning). Absent without `since`. */
  readonly previousSince?: Micros | null;
}

export interface SyncEntitiesRequest {
  /** Entities with a greater sync_id; from the first without it. */
  readonly after: SyncId | null;
  readonly limit: number;
  readonly includeUnsubscribed: boolean;
}

export interface SyncEntitiesPage {
  /** At most `limit`, in sync_id order. */
  readonly entities: readonly SyncEntity[];
  readonly hasMore: boolean;
}

interface EntityRow {
  sync_id: string;
  latest_guid: string;
  feed_url: string;
  subscribed_at: string;
  unsubscribed_at: string | null;
}

const ENTITY_COLUMNS = 'sub.sync_id, sub.latest_guid, sub.feed_url, sub.subscribed_at, sub.unsubscribed_at';

const entityOf = (row: EntityRow): SyncEntity => ({
  syncId: row.sync_id,
  guid: row.latest_guid,
  feedUrl: row.feed_url,
  subscribedAt: Number(row.subscribed_at),
  unsubscribedAt: row.unsubscribed_at === null ? null : Number(row.unsubscribed_at),
});

/** Rows whose last change did not come from `$n` (no Client-ID to leave out when it is null). */
const notFrom = (parameter: string) =>
  `(${parameter}::uuid IS NULL OR sub.last_client_id IS DISTINCT FROM ${parameter}::uuid)`;

export class SyncQuery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly readModel: ReadSchema,
  ) {}

  private query<T>(text: (schema: string) => string, params: unknown[]): Promise<T[]> {
    return poolRows<T>(this.dataSource, text(quoteIdent(this.readModel.schema)), params);
  }

  /** The changes after `since`, and where the page before begins, in one statement (one snapshot):
   * the previous page's `since` is the cursor of the (`limit`+1)-th change at or before `since`
   * counting back (none: the previous page starts at the beginning). */
  async changes(userId: string, request: SyncChangesRequest): Promise<SyncChangesPage> {
    const rows = await this.query<
      Partial<EntityRow> & {
        previous: string | null;
        last_updated: string | null;
        sync_cursor: string | null;
      }
    >(
      (s) => `
        SELECT earlier.previous, page.*
          FROM (SELECT (SELECT sub.sync_cursor FROM ${s}.subscriptions sub
                         WHERE sub.user_id = $1 AND sub.sync_cursor <= $2::bigint AND ${notFrom('$4')}
                         ORDER BY sub.sync_cursor DESC OFFSET $3::int LIMIT 1) AS previous) earlier
          LEFT JOIN LATERAL (
            SELECT ${ENTITY_COLUMNS}, sub.last_updated, sub.sync_cursor FROM ${s}.subscriptions sub
             WHERE sub.user_id = $1 AND sub.sync_cursor > coalesce($2::bigint, -1) AND ${notFrom('$4')}
             ORDER BY sub.sync_cursor LIMIT $3::int + 1) page ON true
         ORDER BY page.sync_cursor`,
      [userId, request.since, request.limit, request.excludeClientId],
    );
    const found = rows.filter((row): row is typeof row & EntityRow => row.sync_id != null);
    const previous = rows[0]?.previous ?? null;
    return {
      changes: found.slice(0, request.limit).map((row) => ({
        entity: entityOf(row),
        lastUpdated: Number(row.last_updated),
        cursor: Number(row.sync_cursor),
      })),
      hasMore: found.length > request.limit,
      ...(request.since === null ? {} : { previousSince: previous === null ? null : Number(previous) }),
    };
  }

  /** A page of the user's entities in sync_id order (keyset: after `after`), subscribed ones only
   * unless `includeUnsubscribed`. One statement on the (user_id, sync_id) index. */
  async entities(userId: string, request: SyncEntitiesRequest): Promise<SyncEntitiesPage> {
    const rows = await this.query<EntityRow>(
      (s) => `
        SELECT ${ENTITY_COLUMNS} FROM ${s}.subscriptions sub
         WHERE sub.user_id = $1 AND ($2::uuid IS NULL OR sub.sync_id > $2::uuid)
           AND ($3::boolean OR sub.unsubscribed_at IS NULL)
         ORDER BY sub.sync_id LIMIT $4`,
      [userId, request.after, request.includeUnsubscribed, request.limit + 1],
    );
    return {
      entities: rows.slice(0, request.limit).map(entityOf),
      hasMore: rows.length > request.limit,
    };
  }

  /** The user's entity with this sync_id, subscribed or not; null when the user has none. */
  async entity(userId: string, syncId: SyncId): Promise<SyncEntity | null> {
    const [row] = await this.query<EntityRow>(
      (s) =>
        `SELECT ${ENTITY_COLUMNS} FROM ${s}.subscriptions sub WHERE sub.user_id = $1 AND sub.sync_id = $2::uuid`,
      [userId, syncId],
    );
    return row === undefined ? null : entityOf(row);
  }
}
