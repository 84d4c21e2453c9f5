import { MigrationInterface, QueryRunner } from 'typeorm';

/** The read model lives in its own schema so that a new projection version can be rebuilt beside
 * the live one (and a replay can build into a scratch schema). Instants are epoch milliseconds
 * (bigint), exactly as the decider computes them. */
export function readModelMigrations(schema: string): (new () => MigrationInterface)[] {
  const s = `"${schema}"`;

  class ReadModelTables implements MigrationInterface {
    readonly name = `ReadModel_${schema}_1732400000002`;

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await queryRunner.query(`
        CREATE TABLE ${s}.subscriptions (
          user_id text NOT NULL,
          id uuid NOT NULL,
          feed_url text NOT NULL,
          is_subscribed boolean NOT NULL,
          subscription_changed bigint NOT NULL,
          guid_changed bigint,
          deleted bigint,
          merged_into uuid,
          deletion_id bigint,
          latest_guid uuid NOT NULL,
          change_time bigint GENERATED ALWAYS AS (greatest(subscription_changed, guid_changed, deleted)) STORED,
          PRIMARY KEY (user_id, id)
        )`);
      await queryRunner.query(`CREATE INDEX ON ${s}.subscriptions (user_id, change_time, id)`);
      await queryRunner.query(`
        CREATE TABLE ${s}.subscription_guids (
          user_id text NOT NULL,
          guid uuid NOT NULL,
          subscription_id uuid NOT NULL,
          since bigint NOT NULL,
          position integer NOT NULL,
          PRIMARY KEY (user_id, guid)
        )`);
      await queryRunner.query(`CREATE INDEX ON ${s}.subscription_guids (user_id, subscription_id, position)`);
      await queryRunner.query(`
        CREATE TABLE ${s}.subscription_feed_urls (
          user_id text NOT NULL,
          normalized_feed_url text NOT NULL,
          subscription_id uuid NOT NULL,
          PRIMARY KEY (user_id, normalized_feed_url)
        )`);
      await queryRunner.query(`CREATE INDEX ON ${s}.subscription_feed_urls (user_id, subscription_id)`);
      await queryRunner.query(`
        CREATE TABLE ${s}.deletions (
          deletion_id bigint PRIMARY KEY,
          user_id text NOT NULL,
          subscription_id uuid NOT NULL,
          status text NOT NULL CHECK (status IN ('PENDING', 'SUCCESS', 'FAILURE')),
          requested_at bigint NOT NULL,
          finished_at bigint
        )`);
      await queryRunner.query(`CREATE INDEX ON ${s}.deletions (status) WHERE status = 'PENDING'`);
      await queryRunner.query(`
        CREATE TABLE ${s}.user_clocks (
          user_id text PRIMARY KEY,
          last_instant bigint NOT NULL
        )`);
      await queryRunner.query(`
        CREATE TABLE ${s}.request_outcomes (
          partition integer NOT NULL,
          "offset" bigint NOT NULL,
          user_id text NOT NULL,
          event_id uuid NOT NULL,
          request_id text NOT NULL,
          event_type text NOT NULL,
          instant bigint NOT NULL,
          outcome jsonb NOT NULL,
          PRIMARY KEY (partition, "offset")
        )`);
      await queryRunner.query(`CREATE INDEX ON ${s}.request_outcomes (user_id, partition, "offset")`);
      await queryRunner.query(`
        CREATE TABLE ${s}.projection_offsets (
          partition integer PRIMARY KEY,
          next_offset bigint NOT NULL
        )`);
      await queryRunner.query(`
        CREATE TABLE ${s}.deletion_saga (
          deletion_id bigint PRIMARY KEY,
          user_id text NOT NULL,
          result text NOT NULL CHECK (result IN ('COMPLETED', 'FAILED')),
          deleted_at bigint,
          reason text,
          logged boolean NOT NULL DEFAULT false
        )`);
      await queryRunner.query(`CREATE INDEX ON ${s}.deletion_saga (logged) WHERE NOT logged`);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`DROP SCHEMA ${s} CASCADE`);
    }
  }

  /** The gpodder.net face: devices, and episode actions as recorded (`received_at` is what a
   * download's `since` compares). */
  class GpodderTables implements MigrationInterface {
    readonly name = `ReadModel_${schema}_1732400000006`;

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`
        CREATE TABLE ${s}.devices (
          user_id text NOT NULL,
          id text NOT NULL,
          caption text NOT NULL,
          type text NOT NULL CHECK (type IN ('desktop', 'laptop', 'mobile', 'server', 'other')),
          PRIMARY KEY (user_id, id)
        )`);
      await queryRunner.query(`
        CREATE TABLE ${s}.episode_actions (
          user_id text NOT NULL,
          sequence bigint NOT NULL,
          ordinal integer NOT NULL,
          received_at bigint NOT NULL,
          podcast text NOT NULL,
          episode text NOT NULL,
          action text NOT NULL CHECK (action IN ('download', 'play', 'delete', 'new')),
          "timestamp" text NOT NULL,
          device text,
          guid text,
          started integer,
          position integer,
          total integer,
          PRIMARY KEY (user_id, sequence, ordinal)
        )`);
      await queryRunner.query(`CREATE INDEX ON ${s}.episode_actions (user_id, received_at)`);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`DROP TABLE ${s}.episode_actions`);
      await queryRunner.query(`DROP TABLE ${s}.devices`);
    }
  }

  /** A subscription's first guid (its id) and the feed URL it was created with live on its own row,
   * so that adding a feed writes one row, not three. `subscription_guids` and
   * `subscription_feed_urls` become views with the same columns and rows as the tables they
   * replace; the tables behind them keep only what a subscription took later. The feed URL a
   * subscription was created with was nobody's before (a feed URL that maps to a subscription
   * always does from then on), so no two subscriptions of a user share it and a later claim of it,
   * when there is one, is the one that counts. Existing rows keep every claim in the table. */
  class OneRowPerNewSubscription implements MigrationInterface {
    readonly name = `ReadModel_${schema}_1732400000008`;

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`ALTER TABLE ${s}.subscriptions ADD COLUMN created bigint`);
      await queryRunner.query(`ALTER TABLE ${s}.subscriptions ADD COLUMN created_feed_url text`);
      await queryRunner.query(`
        UPDATE ${s}.subscriptions sub SET created = g.since FROM ${s}.subscription_guids g
         WHERE g.user_id = sub.user_id AND g.guid = sub.id AND g.position = 0`);
      await queryRunner.query(`ALTER TABLE ${s}.subscriptions ALTER COLUMN created SET NOT NULL`);
      await queryRunner.query(
        `CREATE UNIQUE INDEX ON ${s}.subscriptions (user_id, created_feed_url) WHERE created_feed_url IS NOT NULL`,
      );
      await queryRunner.query(`DELETE FROM ${s}.subscription_guids WHERE position = 0`);
      await queryRunner.query(`ALTER TABLE ${s}.subscription_guids RENAME TO subscription_later_guids`);
      await queryRunner.query(
        `ALTER TABLE ${s}.subscription_feed_urls RENAME TO subscription_later_feed_urls`,
      );
      await queryRunner.query(`
        CREATE VIEW ${s}.subscription_guids AS
          SELECT user_id, id AS guid, id AS subscription_id, created AS since, 0 AS position FROM ${s}.subscriptions
          UNION ALL
          SELECT user_id, guid, subscription_id, since, position FROM ${s}.subscription_later_guids`);
      await queryRunner.query(`
        CREATE VIEW ${s}.subscription_feed_urls AS
          SELECT user_id, normalized_feed_url, subscription_id FROM ${s}.subscription_later_feed_urls
          UNION ALL
          SELECT sub.user_id, sub.created_feed_url, sub.id FROM ${s}.subscriptions sub
           WHERE sub.created_feed_url IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM ${s}.subscription_later_feed_urls f
                              WHERE f.user_id = sub.user_id AND f.normalized_feed_url = sub.created_feed_url)`);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`DROP VIEW ${s}.subscription_feed_urls`);
      await queryRunner.query(`DROP VIEW ${s}.subscription_guids`);
      await queryRunner.query(
        `ALTER TABLE ${s}.subscription_later_feed_urls RENAME TO subscription_feed_urls`,
      );
      await queryRunner.query(`ALTER TABLE ${s}.subscription_later_guids RENAME TO subscription_guids`);
      await queryRunner.query(`
        INSERT INTO ${s}.subscription_guids (user_id, guid, subscription_id, since, position)
        SELECT user_id, id, id, created, 0 FROM ${s}.subscriptions`);
      await queryRunner.query(`
        INSERT INTO ${s}.subscription_feed_urls (user_id, normalized_feed_url, subscription_id)
        SELECT user_id, created_feed_url, id FROM ${s}.subscriptions WHERE created_feed_url IS NOT NULL
        ON CONFLICT DO NOTHING`);
      await queryRunner.query(`ALTER TABLE ${s}.subscriptions DROP COLUMN created_feed_url`);
      await queryRunner.query(`ALTER TABLE ${s}.subscriptions DROP COLUMN created`);
    }
  }

  /** The sync draft's face (CONTRACT, "The Open Podcast API sync draft"): each subscription's
   * sync_id, its last-write-wins part times, last change and sync cursor (Micros, microseconds since
   * the epoch), the user's sync clock, and the sync actions seen. Rows written before it get their
   * sync_id exactly as `syncIdOf` computes it, and for the rest the best the stored columns tell
   * (see `up`): the log holds the truth, and a replay derives it. */
  class SyncFace implements MigrationInterface {
    readonly name = `ReadModel_${schema}_1732400000011`;

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`
        ALTER TABLE ${s}.subscriptions
          ADD COLUMN sync_id uuid, ADD COLUMN subscribed_at bigint, ADD COLUMN unsubscribed_at bigint,
          ADD COLUMN state_time bigint, ADD COLUMN identity_time bigint, ADD COLUMN last_updated bigint,
          ADD COLUMN last_client_id uuid, ADD COLUMN sync_cursor bigint`);
      // Approximations but for sync_id: a subscription was subscribed since its creation, and its
      // latest change (change_time) set its state when it is not subscribed on the sync face and is
      // its last update; its state part was last written with is_subscribed, its identity part with
      // its latest guid (or at its creation); no Client-ID. Cursors follow the latest changes in
      // (change_time, id) order, strictly increasing per user and never below the change's time:
      // c_i = max(t_i, c_(i-1) + 1) over the user's rows, which is i + max over j <= i of (t_j - j).
      await queryRunner.query(`
        WITH ranked AS (
               SELECT user_id, id, change_time * 1000 AS t, ${syncIdDigestSql('user_id', 'id')} AS digest,
                      row_number() OVER (PARTITION BY user_id ORDER BY change_time, id) AS i
                 FROM ${s}.subscriptions),
             cursors AS (
               SELECT user_id, id, digest,
                      i + max(t - i) OVER (PARTITION BY user_id ORDER BY i ROWS UNBOUNDED PRECEDING) AS cursor
                 FROM ranked)
        UPDATE ${s}.subscriptions sub SET
          sync_id = ${uuidV4Sql('c.digest')},
          subscribed_at = sub.created * 1000,
          unsubscribed_at = CASE WHEN sub.is_subscribed AND sub.merged_into IS NULL THEN NULL
                                 ELSE sub.change_time * 1000 END,
          state_time = sub.subscription_changed * 1000,
          identity_time = greatest(sub.created, sub.guid_changed) * 1000,
          last_updated = sub.change_time * 1000,
          sync_cursor = c.cursor
          FROM cursors c
         WHERE c.user_id = sub.user_id AND c.id = sub.id`);
      // One statement, so one scan checks them all.
      await queryRunner.query(`
        ALTER TABLE ${s}.subscriptions
          ALTER COLUMN sync_id SET NOT NULL, ALTER COLUMN subscribed_at SET NOT NULL,
          ALTER COLUMN state_time SET NOT NULL, ALTER COLUMN identity_time SET NOT NULL,
          ALTER COLUMN last_updated SET NOT NULL, ALTER COLUMN sync_cursor SET NOT NULL`);
      // The projector loads subscriptions by sync_id; the sync listing pages by cursor.
      await queryRunner.query(`CREATE UNIQUE INDEX ON ${s}.subscriptions (user_id, sync_id)`);
      await queryRunner.query(`CREATE INDEX ON ${s}.subscriptions (user_id, sync_cursor)`);
      await queryRunner.query(`ALTER TABLE ${s}.user_clocks ADD COLUMN sync_clock bigint NOT NULL DEFAULT 0`);
      await queryRunner.query(`
        UPDATE ${s}.user_clocks c SET sync_clock = m.cursor
          FROM (SELECT user_id, max(sync_cursor) AS cursor FROM ${s}.subscriptions GROUP BY user_id) m
         WHERE m.user_id = c.user_id`);
      await queryRunner.query(`
        CREATE TABLE ${s}.sync_actions (
          user_id text NOT NULL,
          action_id uuid NOT NULL,
          status text NOT NULL CHECK (status IN ('applied', 'ignored', 'rejected')),
          reason text,
          fingerprint text NOT NULL,
          subscription_id uuid,
          PRIMARY KEY (user_id, action_id)
        )`);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`DROP TABLE ${s}.sync_actions`);
      await queryRunner.query(`ALTER TABLE ${s}.user_clocks DROP COLUMN sync_clock`);
      // Their indexes go with them.
      await queryRunner.query(`
        ALTER TABLE ${s}.subscriptions
          DROP COLUMN sync_id, DROP COLUMN subscribed_at, DROP COLUMN unsubscribed_at, DROP COLUMN state_time,
          DROP COLUMN identity_time, DROP COLUMN last_updated, DROP COLUMN last_client_id, DROP COLUMN sync_cursor`);
    }
  }

  /** gpodder.net's settings: one row per scope that ever held one, by the scope's id
   * (`settingsScopeIdOf`, a digest of its kind and parts, so the key stays 16 bytes however long its
   * URLs), with those parts and every key's JSON value. */
  class GpodderSettings implements MigrationInterface {
    readonly name = `ReadModel_${schema}_1732400000013`;

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`
        CREATE TABLE ${s}.gpodder_settings (
          user_id text NOT NULL,
          scope_id uuid NOT NULL,
          scope text NOT NULL CHECK (scope IN ('account', 'device', 'podcast', 'episode')),
          device text,
          podcast text,
          episode text,
          settings jsonb NOT NULL CHECK (jsonb_typeof(settings) = 'object'),
          PRIMARY KEY (user_id, scope_id)
        )`);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`DROP TABLE ${s}.gpodder_settings`);
    }
  }

  /** gpodder.net's `flattr` episode action, stored as uploaded like the others. */
  class EpisodeActionFlattr implements MigrationInterface {
    readonly name = `ReadModel_${schema}_1732400000014`;

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`
        ALTER TABLE ${s}.episode_actions DROP CONSTRAINT episode_actions_action_check,
          ADD CONSTRAINT episode_actions_action_check
            CHECK (action IN ('download', 'play', 'delete', 'new', 'flattr'))`);
    }

    /** Rows holding `flattr` stay (the constraint is not checked against them); new ones are refused. */
    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`
        ALTER TABLE ${s}.episode_actions DROP CONSTRAINT episode_actions_action_check,
          ADD CONSTRAINT episode_actions_action_check
            CHECK (action IN ('download', 'play', 'delete', 'new')) NOT VALID`);
    }
  }

  /** A device's last use: the instant of the latest event that named it. A device stored before
   * has NULL (unknown) until an event names it again: the read model holds no time of a device's
   * creation, update or upload, so it is not guessed; a replay derives every value from the log. */
  class DeviceLastUse implements MigrationInterface {
    readonly name = `ReadModel_${schema}_1732400000016`;

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`ALTER TABLE ${s}.devices ADD COLUMN last_used bigint`);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`ALTER TABLE ${s}.devices DROP COLUMN last_used`);
    }
  }

  return [
    ReadModelTables,
    GpodderTables,
    OneRowPerNewSubscription,
    SyncFace,
    GpodderSettings,
    EpisodeActionFlattr,
    DeviceLastUse,
  ];
}

/** `syncIdOf` in SQL, in two steps, over the SQL expressions of a user id (text) and a subscription
 * id (uuid): the first 16 bytes of SHA-256 of "castlog sync_id", NUL, the user id, NUL and the id
 * as lower-case text, all UTF-8 (`syncIdDigestSql`); then those bytes with the version 4 and
 * RFC 9562 variant bits, as a uuid (`uuidV4Sql`). Written out here for the migration that fills the
 * rows stored before sync_ids existed: it must keep computing what `syncIdOf` computed then. */
const syncIdDigestSql = (userId: string, id: string): string =>
  `substring(sha256(convert_to('castlog sync_id', 'UTF8') || '\\x00'::bytea || convert_to(${userId}, 'UTF8') ||
                    '\\x00'::bytea || convert_to(${id}::text, 'UTF8')) FROM 1 FOR 16)`;

const uuidV4Sql = (digest: string): string =>
  `encode(set_byte(set_byte(${digest}, 6, (get_byte(${digest}, 6) & 15) | 64),
                   8, (get_byte(${digest}, 8) & 63) | 128), 'hex')::uuid`;

/** The indexes the migrations above create that only the read model's readers use — the change
 * listing, the sync listing, the request history, the gpodder.net face's episode-action downloads,
 * the deletion saga's pending deletions — and no statement of the projector does. A replay into an
 * empty schema builds them once its tables are full, which costs less than keeping them up to date
 * through every write. PostgreSQL's names for them. */
export const READER_INDEXES: readonly string[] = [
  'subscriptions_user_id_change_time_id_idx',
  'request_outcomes_user_id_partition_offset_idx',
  'episode_actions_user_id_received_at_idx',
  'deletions_status_idx',
  'subscriptions_user_id_sync_cursor_idx',
];
