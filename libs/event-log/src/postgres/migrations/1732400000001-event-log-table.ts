import { MigrationInterface, QueryRunner } from 'typeorm';

/** The table-backed event log of the embedded mode: one partition, offsets are `seq`. */
export class EventLogTable1732400000001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE SCHEMA IF NOT EXISTS castlog_log`);
    await queryRunner.query(`
      CREATE TABLE castlog_log.events (
        seq bigint PRIMARY KEY,
        key text NOT NULL,
        type text NOT NULL,
        version integer NOT NULL,
        event_id uuid NOT NULL,
        request_id text NOT NULL,
        value jsonb NOT NULL,
        appended_at bigint NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP SCHEMA castlog_log CASCADE`);
  }
}
