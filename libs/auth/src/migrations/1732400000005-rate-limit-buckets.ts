import { MigrationInterface, QueryRunner } from 'typeorm';

/** The rate-limit token buckets (RateLimitStore), one row per key, shared by every API replica.
 * `tokens` is the bucket's content at `updated_at_ms` (epoch ms); `last_take_allowed` is the answer
 * to the key's last take, which the take statement returns (PostgreSQL 17's RETURNING sees only
 * the new row). UNLOGGED: every request writes a row, and buckets need no crash safety (after a
 * crash the table is empty, i.e. every bucket full, as after a restart of an in-memory limiter),
 * so the writes skip the WAL and its flush. */
export class RateLimitBuckets1732400000005 implements MigrationInterface {
  readonly name = 'RateLimitBuckets1732400000005';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE UNLOGGED TABLE castlog_auth.rate_limit_buckets (
        key text NOT NULL,
        tokens double precision NOT NULL,
        updated_at_ms bigint NOT NULL,
        last_take_allowed boolean NOT NULL,
        CONSTRAINT rate_limit_buckets_pkey PRIMARY KEY (key)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS castlog_auth.rate_limit_buckets`);
  }
}
