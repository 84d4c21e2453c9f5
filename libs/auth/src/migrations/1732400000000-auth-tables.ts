import { MigrationInterface, QueryRunner } from 'typeorm';

/** Users and their tokens, in a schema of their own. Tokens are stored as SHA-256 hashes only. */
export class AuthTables1732400000000 implements MigrationInterface {
  readonly name = 'AuthTables1732400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE SCHEMA IF NOT EXISTS castlog_auth`);
    await queryRunner.query(`
      CREATE TABLE castlog_auth.users (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        name text NOT NULL,
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT users_pkey PRIMARY KEY (id),
        CONSTRAINT users_name_key UNIQUE (name)
      )`);
    await queryRunner.query(`
      CREATE TABLE castlog_auth.tokens (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL,
        token_hash text NOT NULL,
        kind text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz NULL,
        CONSTRAINT tokens_pkey PRIMARY KEY (id),
        CONSTRAINT tokens_token_hash_key UNIQUE (token_hash),
        CONSTRAINT tokens_kind_check CHECK (kind IN ('access', 'refresh', 'cli')),
        CONSTRAINT tokens_user_id_fkey FOREIGN KEY (user_id)
          REFERENCES castlog_auth.users (id) ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX tokens_user_id_idx ON castlog_auth.tokens (user_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS castlog_auth.tokens`);
    await queryRunner.query(`DROP TABLE IF EXISTS castlog_auth.users`);
    await queryRunner.query(`DROP SCHEMA IF EXISTS castlog_auth`);
  }
}
