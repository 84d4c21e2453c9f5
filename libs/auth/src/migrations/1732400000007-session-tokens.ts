import { MigrationInterface, QueryRunner } from 'typeorm';

/** Tokens of kind `session`: the gpodder.net face's session cookies, stored hashed beside the other
 * tokens so that every API replica knows them. The partial index serves the sweep of ended and
 * expired sessions (`AuthStore.issueSession`). */
export class SessionTokens1732400000007 implements MigrationInterface {
  readonly name = 'SessionTokens1732400000007';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE castlog_auth.tokens
        DROP CONSTRAINT tokens_kind_check,
        ADD CONSTRAINT tokens_kind_check CHECK (kind IN ('access', 'refresh', 'cli', 'session'))`);
    await queryRunner.query(`
      CREATE INDEX tokens_session_expires_at_idx ON castlog_auth.tokens (expires_at)
        WHERE kind = 'session'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS castlog_auth.tokens_session_expires_at_idx`);
    await queryRunner.query(`DELETE FROM castlog_auth.tokens WHERE kind = 'session'`);
    await queryRunner.query(`
      ALTER TABLE castlog_auth.tokens
        DROP CONSTRAINT tokens_kind_check,
        ADD CONSTRAINT tokens_kind_check CHECK (kind IN ('access', 'refresh', 'cli'))`);
  }
}
