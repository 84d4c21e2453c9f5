import { MigrationInterface, QueryRunner } from 'typeorm';

/** Announces every revoked or deleted token (a removed user's tokens go by cascade) on the channel
 * `castlog_tokens`, with the token's hash as payload, whoever changes it: the API, the CLI or an
 * operator's SQL. Processes that remember valid tokens forget them on the notice. */
export class TokenChangeNotices1732400000004 implements MigrationInterface {
  readonly name = 'TokenChangeNotices1732400000004';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION castlog_auth.announce_token_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('castlog_tokens', OLD.token_hash);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER tokens_announce_change
        AFTER UPDATE OF revoked_at, expires_at, kind, user_id, token_hash OR DELETE ON castlog_auth.tokens
        FOR EACH ROW EXECUTE FUNCTION castlog_auth.announce_token_change()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER tokens_announce_change ON castlog_auth.tokens`);
    await queryRunner.query(`DROP FUNCTION castlog_auth.announce_token_change()`);
  }
}
