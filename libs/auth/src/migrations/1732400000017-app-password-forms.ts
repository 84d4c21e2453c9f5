import { MigrationInterface, QueryRunner } from 'typeorm';

/** `app_passwords.form_id`: the form an app password was created from (each showing of the web
 * page's form has its own), unique per user, so a form sent again (a reload of the page that shows
 * the new password) creates nothing a second time. Null for passwords created before. */
export class AppPasswordForms1732400000017 implements MigrationInterface {
  readonly name = 'AppPasswordForms1732400000017';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE castlog_auth.app_passwords ADD COLUMN form_id uuid`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX app_passwords_user_id_form_id_key ON castlog_auth.app_passwords (user_id, form_id)
        WHERE form_id IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX castlog_auth.app_passwords_user_id_form_id_key`);
    await queryRunner.query(`ALTER TABLE castlog_auth.app_passwords DROP COLUMN form_id`);
  }
}
