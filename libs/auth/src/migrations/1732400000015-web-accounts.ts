import { MigrationInterface, QueryRunner } from 'typeorm';

/** What the web pages' accounts need:
 * - `users.is_admin`, the administrators;
 * - tokens of kind `web`, the web pages' sign-in sessions, kept apart from gpodder.net's `session`
 *   kind; the partial index that serves the sweep of ended sessions now covers both;
 * - `app_passwords`: per-application passwords, stored as an HMAC-SHA-256 of the secret under the
 *   installation's key in `hash_keys` (drawn here, once, from gen_random_uuid's strong random bits:
 *   244 of them); revoked ones stay until `AuthStore.createAppPassword` sweeps them;
 * - `tokens.app_password_id`: the gpodder.net session a client got for Basic credentials with an app
 *   password, which ends with it;
 * - a trigger announcing every revoked, changed or deleted app password on `castlog_tokens` as a
 *   change of its user (`user:<id>`), as UserChangeNotices1732400000010 does for passwords, so
 *   every API replica forgets what it remembers of the user. */
export class WebAccounts1732400000015 implements MigrationInterface {
  readonly name = 'WebAccounts1732400000015';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE castlog_auth.users ADD COLUMN is_admin boolean NOT NULL DEFAULT false`,
    );
    await queryRunner.query(`
      ALTER TABLE castlog_auth.tokens
        DROP CONSTRAINT tokens_kind_check,
        ADD CONSTRAINT tokens_kind_check CHECK (kind IN ('access', 'refresh', 'cli', 'session', 'web'))`);
    await queryRunner.query(`DROP INDEX castlog_auth.tokens_session_expires_at_idx`);
    await queryRunner.query(`
      CREATE INDEX tokens_session_expires_at_idx ON castlog_auth.tokens (expires_at)
        WHERE kind IN ('session', 'web')`);
    await queryRunner.query(`
      CREATE TABLE castlog_auth.app_passwords (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL,
        name text NOT NULL,
        secret_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz NULL,
        revoked_at timestamptz NULL,
        CONSTRAINT app_passwords_pkey PRIMARY KEY (id),
        CONSTRAINT app_passwords_secret_hash_key UNIQUE (secret_hash),
        CONSTRAINT app_passwords_user_id_fkey FOREIGN KEY (user_id)
          REFERENCES castlog_auth.users (id) ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX app_passwords_user_id_idx ON castlog_auth.app_passwords (user_id)`);
    await queryRunner.query(`
      ALTER TABLE castlog_auth.tokens ADD COLUMN app_password_id uuid NULL
        CONSTRAINT tokens_app_password_id_fkey REFERENCES castlog_auth.app_passwords (id) ON DELETE CASCADE`);
    await queryRunner.query(`
      CREATE INDEX tokens_app_password_id_idx ON castlog_auth.tokens (app_password_id)
        WHERE app_password_id IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE castlog_auth.hash_keys (
        name text NOT NULL,
        key bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT hash_keys_pkey PRIMARY KEY (name)
      )`);
    await queryRunner.query(`
      INSERT INTO castlog_auth.hash_keys (name, key)
      VALUES ('app_passwords', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'))`);
    await queryRunner.query(`
      CREATE FUNCTION castlog_auth.announce_app_password_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('castlog_tokens', 'user:' || OLD.user_id::text);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER app_passwords_announce_change
        AFTER UPDATE OF revoked_at, secret_hash, user_id OR DELETE ON castlog_auth.app_passwords
        FOR EACH ROW EXECUTE FUNCTION castlog_auth.announce_app_password_change()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE castlog_auth.hash_keys`);
    await queryRunner.query(`DROP INDEX castlog_auth.tokens_app_password_id_idx`);
    await queryRunner.query(
      `DELETE FROM castlog_auth.tokens WHERE app_password_id IS NOT NULL OR kind = 'web'`,
    );
    await queryRunner.query(`ALTER TABLE castlog_auth.tokens DROP COLUMN app_password_id`);
    await queryRunner.query(`DROP TABLE castlog_auth.app_passwords`);
    await queryRunner.query(`DROP FUNCTION castlog_auth.announce_app_password_change()`);
    await queryRunner.query(`DROP INDEX castlog_auth.tokens_session_expires_at_idx`);
    await queryRunner.query(`
      CREATE INDEX tokens_session_expires_at_idx ON castlog_auth.tokens (expires_at)
        WHERE kind = 'session'`);
    await queryRunner.query(`
      ALTER TABLE castlog_auth.tokens
        DROP CONSTRAINT tokens_kind_check,
        ADD CONSTRAINT tokens_kind_check CHECK (kind IN ('access', 'refresh', 'cli', 'session'))`);
    await queryRunner.query(`ALTER TABLE castlog_auth.users DROP COLUMN is_admin`);
  }
}
