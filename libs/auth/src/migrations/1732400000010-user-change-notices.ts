import { MigrationInterface, QueryRunner } from 'typeorm';

/** Announces every user whose password or name changes, or who is removed, on the channel
 * `castlog_tokens` (the one token changes use), with `user:<id>` as payload, whoever changes it:
 * the CLI or an operator's SQL. Processes that remember verified passwords forget the user's on the
 * notice. */
export class UserChangeNotices1732400000010 implements MigrationInterface {
  readonly name = 'UserChangeNotices1732400000010';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION castlog_auth.announce_user_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('castlog_tokens', 'user:' || OLD.id::text);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER users_announce_change
        AFTER UPDATE OF password_hash, name, id OR DELETE ON castlog_auth.users
        FOR EACH ROW EXECUTE FUNCTION castlog_auth.announce_user_change()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER users_announce_change ON castlog_auth.users`);
    await queryRunner.query(`DROP FUNCTION castlog_auth.announce_user_change()`);
  }
}
