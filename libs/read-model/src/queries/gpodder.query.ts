import { DeviceType, EpisodeActionKind, Instant, normalizeFeedUrl } from '@castlog/domain';
import { DataSource } from 'typeorm';
import { ReadSchema } from '../projection-versions';
import { poolRows, quoteIdent } from '../sql';

/** What the gpodder.net face reads. Every answer that carries the user's clock reads it in the same
 * statement (one snapshot) as its rows: the clock is the instant of the user's last change, every
 * later change is strictly after it, so a client that sends back `toUnixSeconds(clock)` as an
 * inclusive `since` misses nothing. */
export interface SubscriptionChanges {
  /** Subscribed now and changed at or after `since`. */
  readonly add: readonly string[];
  /** Unsubscribed, deleted or merged into another subscription, or an older URL of a subscription
   * whose URL changed, changed at or after `since`, and held subscribed now by no subscription (as
   * spelt; an older URL, normalised, in any spelling). */
  readonly remove: readonly string[];
  readonly clock: Instant;
}

export interface DeviceView {
  readonly id: string;
  readonly caption: string;
  readonly type: DeviceType;
  /** The user's subscribed feeds: every device shares the one set. */
  readonly subscriptions: number;
  /** The instant of the latest event that named the device; null when the read model does not know
   * it (a device stored before last uses were, and not named since). */
  readonly lastUsed: Instant | null;
}

export interface EpisodeActionView {
  readonly podcast: string;
  readonly episode: string;
  readonly action: EpisodeActionKind;
  readonly timestamp: string;
  readonly device: string | null;
  readonly guid: string | null;
  readonly started: number | null;
  readonly position: number | null;
  readonly total: number | null;
}

export interface EpisodeActionFilter {
  /** Received at or after this instant. */
  readonly since: Instant;
  readonly podcast?: string;
  readonly device?: string;
  /** Only the latest action of each episode (by its timestamp, then the order received). */
  readonly aggregated?: boolean;
}

/** A subscription a gpodder.net client holds: subscribed, not deleted, not merged into another. */
const SUBSCRIBED = 'sub.is_subscribed AND sub.deleted IS NULL AND sub.merged_into IS NULL';

export class GpodderQuery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly readModel: ReadSchema,
  ) {}

  private query<T>(text: (schema: string) => string, params: unknown[]): Promise<T[]> {
    return poolRows<T>(this.dataSource, text(quoteIdent(this.readModel.schema)), params);
  }

  /** The feed URLs the user is subscribed to, in the order they were last subscribed, each once. */
  async subscribedUrls(userId: string): Promise<string[]> {
    const rows = await this.query<{ feed_url: string }>(
      (s) => `SELECT sub.feed_url FROM ${s}.subscriptions sub WHERE sub.user_id = $1 AND ${SUBSCRIBED}
               ORDER BY sub.subscription_changed, sub.id`,
      [userId],
    );
    return [...new Set(rows.map((row) => row.feed_url))];
  }

  /** Changes at or after `since`; without one (or with 0, as gpodder.net reads it), every subscribed
   * URL and nothing removed. */
  async changesSince(userId: string, given: Instant | null): Promise<SubscriptionChanges> {
    const since = given === null || given <= 0 ? null : given;
    // With `since`, and a change at or after it, the URLs held subscribed from before come too (one
    // row each, `held`): a URL one subscription left is not removed while another holds it.
    const rows = await this.query<{
      clock: string | null;
      feed_url: string | null;
      subscribed: boolean | null;
      urls: string[] | null;
      held: boolean;
    }>(
      (s) => `
        WITH clock AS (SELECT coalesce((SELECT last_instant FROM ${s}.user_clocks WHERE user_id = $1), 0) AS clock)
        SELECT clock.clock, sub.feed_url, (${SUBSCRIBED}) AS subscribed,
               CASE WHEN $2::bigint IS NULL THEN NULL ELSE
                 (SELECT array_agg(f.normalized_feed_url) FROM ${s}.subscription_feed_urls f
                   WHERE f.user_id = $1 AND f.subscription_id = sub.id) END AS urls,
               false AS held, sub.change_time, sub.id
          FROM clock LEFT JOIN ${s}.subscriptions sub
            ON sub.user_id = $1 AND ($2::bigint IS NULL OR sub.change_time >= $2::bigint)
        UNION ALL
        SELECT NULL, sub.feed_url, true, NULL, true, sub.change_time, sub.id
          FROM ${s}.subscriptions sub
         WHERE $2::bigint IS NOT NULL AND sub.user_id = $1 AND ${SUBSCRIBED} AND sub.change_time < $2::bigint
           AND EXISTS (SELECT 1 FROM ${s}.subscriptions w WHERE w.user_id = $1 AND w.change_time >= $2::bigint)
         ORDER BY held, change_time, id`,
      [userId, since],
    );
    const add = new Set<string>();
    const remove = new Set<string>();
    const olderUrls = new Set<string>();
    const held = new Set<string>();
    for (const row of rows) {
      if (row.feed_url === null) continue;
      if (since !== null && row.subscribed === true) held.add(row.feed_url);
      if (row.held) continue;
      if (row.subscribed === true) add.add(row.feed_url);
      else if (since !== null) remove.add(row.feed_url);
      if (since === null) continue;
      // A feed whose URL was changed (PATCH new_feed_url) is gone under its older URLs: a client
      // holding one of them removes it (the older URLs as compared, normalised).
      const current = normalizeFeedUrl(row.feed_url);
      for (const url of row.urls ?? [])
        if (url !== current && !remove.has(url)) {
          remove.add(url);
          olderUrls.add(url);
        }
    }
    // Two subscriptions can hold one URL (a /v1 POST item matched by guid, a PATCH new_feed_url):
    // a URL stays while one holds it subscribed, as the list spells it; an older URL, which is in
    // its normalised form, while one holds it in any spelling.
    const heldNormalized = new Set(olderUrls.size === 0 ? [] : [...held].map(normalizeFeedUrl));
    for (const url of remove)
      if (held.has(url) || (olderUrls.has(url) && heldNormalized.has(url))) remove.delete(url);
    return { add: [...add], remove: [...remove], clock: Number(rows[0]?.clock ?? 0) };
  }

  async devices(userId: string): Promise<DeviceView[]> {
    const rows = await this.query<{
      id: string;
      caption: string;
      type: DeviceType;
      subscriptions: string;
      last_used: string | null;
    }>(
      (s) => `
        SELECT d.id, d.caption, d.type,
               (SELECT count(DISTINCT sub.feed_url) FROM ${s}.subscriptions sub WHERE sub.user_id = $1 AND ${SUBSCRIBED})
                 AS subscriptions,
               d.last_used
          FROM ${s}.devices d WHERE d.user_id = $1 ORDER BY d.id`,
      [userId],
    );
    return rows.map((row) => ({
      id: row.id,
      caption: row.caption,
      type: row.type,
      subscriptions: Number(row.subscriptions),
      lastUsed: row.last_used === null ? null : Number(row.last_used),
    }));
  }

  async hasDevice(userId: string, deviceId: string): Promise<boolean> {
    const rows = await this.query(
      (s) => `SELECT 1 FROM ${s}.devices WHERE user_id = $1 AND id = $2`,
      [userId, deviceId],
    );
    return rows.length > 0;
  }

  /** The settings of the scope with id `scopeId` (`settingsScopeIdOf`): `{}` when it holds none. */
  async settings(userId: string, scopeId: string): Promise<Record<string, unknown>> {
    const [row] = await this.query<{ settings: Record<string, unknown> }>(
      (s) => `SELECT settings FROM ${s}.gpodder_settings WHERE user_id = $1 AND scope_id = $2`,
      [userId, scopeId],
    );
    return row?.settings ?? {};
  }

  /** Episode actions in the order received, with the user's clock. */
  async episodeActions(
    userId: string,
    filter: EpisodeActionFilter,
  ): Promise<{ actions: EpisodeActionView[]; clock: Instant }> {
    const rows = await this.query<EpisodeActionView & { clock: string; action: EpisodeActionKind | null }>(
      (s) => `
        WITH clock AS (SELECT coalesce((SELECT last_instant FROM ${s}.user_clocks WHERE user_id = $1), 0) AS clock)
        SELECT clock.clock, a.podcast, a.episode, a.action, a."timestamp", a.device, a.guid, a.started,
               a.position, a.total
          FROM clock LEFT JOIN ${s}.episode_actions a
            ON a.user_id = $1 AND a.received_at >= $2
           AND ($3::text IS NULL OR a.podcast = $3) AND ($4::text IS NULL OR a.device = $4)
         ORDER BY a.received_at, a.sequence, a.ordinal`,
      [userId, filter.since, filter.podcast ?? null, filter.device ?? null],
    );
    const clock = Number(rows[0]?.clock ?? 0);
    const actions: EpisodeActionView[] = rows
      .filter((row) => row.action !== null)
      .map(({ clock: _clock, ...action }) => action);
    if (filter.aggregated !== true) return { actions, clock };
    // The latest of each episode; ISO timestamps of one format compare as text.
    const latest = new Map<string, EpisodeActionView>();
    for (const action of actions) {
      const key = `${action.podcast}\u0000${action.episode}`;
      const held = latest.get(key);
      if (held === undefined || held.timestamp <= action.timestamp) {
        latest.delete(key);
        latest.set(key, action);
      }
    }
    return { actions: [...latest.values()], clock };
  }
}
