import { MigrationInterface, QueryRunner } from 'typeorm';

/** Which projection version each read model (named by its base schema, READ_MODEL_SCHEMA) has,
 * and which one serves reads: at most one active version per base. */
export class ProjectionVersionsTable1732400000003 implements MigrationInterface {
  readonly name = 'ProjectionVersionsTable1732400000003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE SCHEMA IF NOT EXISTS castlog_projections`);
    await queryRunner.query(`
      CREATE TABLE castlog_projections.versions (
        base text NOT NULL,
        version integer NOT NULL CHECK (version >= 1),
        schema text NOT NULL,
        status text NOT NULL CHECK (status IN ('building', 'active', 'retired')),
        registered_at timestamptz NOT NULL DEFAULT now(),
        activated_at timestamptz,
        PRIMARY KEY (base, version)
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX versions_one_active ON castlog_projections.versions (base) WHERE status = 'active'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP SCHEMA castlog_projections CASCADE`);
  }
}
