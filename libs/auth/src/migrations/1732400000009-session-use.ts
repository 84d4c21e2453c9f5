import { MigrationInterface, QueryRunner } from 'typeorm';

/** `used_at`: when a session was last seen presented as a cookie (its first use, then each
 * renewal), null while nobody has presented it. The cap on a user's sessions ends unused ones
 * first, so that a client sending Basic without keeping the cookie cannot push out the session of
 * a client that uses its own (`AuthStore.issueSession`). Existing sessions count as used. */
export class SessionUse1732400000009 implements MigrationInterface {
  readonly name = 'SessionUse1732400000009';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE castlog_auth.tokens ADD COLUMN used_at timestamptz`);
    await queryRunner.query(`UPDATE castlog_auth.tokens SET used_at = created_at WHERE kind = 'session'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE castlog_auth.tokens DROP COLUMN used_at`);
  }
}
