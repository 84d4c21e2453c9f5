import { MigrationInterface, QueryRunner } from 'typeorm';

/** The feed catalog (`castlog_feeds`): one row per distinct feed, keyed by its normalised URL, with
 * what its last fetch told and when to fetch it next; and the positions in the event log up to which
 * the resolver has learned feeds. Nothing here is personal or derived from the log alone: it is
 * rebuilt by following the log and fetching again. */
export class FeedCatalog1732400000012 implements MigrationInterface {
  readonly name = 'FeedCatalog1732400000012';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE SCHEMA castlog_feeds`);
    await queryRunner.query(`
      CREATE TABLE castlog_feeds.feeds (
        url text PRIMARY KEY,
        title text,
        description text,
        link text,
        image_url text,
        language text,
        author text,
        podcast_guid text,
        episode_count integer,
        newest_episode_at timestamptz,
        etag text,
        last_modified text,
        fetched_at timestamptz,
        next_fetch_at timestamptz NOT NULL,
        outcome text,
        outcome_detail text,
        failures integer NOT NULL DEFAULT 0,
        moved_to text,
        first_seen timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX feeds_next_fetch_at ON castlog_feeds.feeds (next_fetch_at)`);
    await queryRunner.query(`
      CREATE TABLE castlog_feeds.log_offsets (
        partition integer PRIMARY KEY,
        next_offset bigint NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP SCHEMA castlog_feeds CASCADE`);
  }
}
