import { migrationsFor, MIGRATIONS_TABLE } from './database';

/** The names TypeORM records in castlog_migrations: a migration's `name`, else its class name. */
const recordedNames = (schema: string) =>
  migrationsFor(schema).map((Migration) => (new Migration() as { name?: string }).name ?? Migration.name);

describe('migrationsFor', () => {
  it("assembles every library's migrations in the order existing databases recorded them", () => {
    expect(recordedNames('castlog')).toEqual([
      'AuthTables1732400000000',
      'EventLogTable1732400000001',
      'ProjectionVersionsTable1732400000003',
      'TokenChangeNotices1732400000004',
      'RateLimitBuckets1732400000005',
      'ReadModel_castlog_1732400000002',
      'ReadModel_castlog_1732400000006',
      'ReadModel_castlog_1732400000008',
      'ReadModel_castlog_1732400000011',
      'ReadModel_castlog_1732400000013',
      'ReadModel_castlog_1732400000014',
      'ReadModel_castlog_1732400000016',
      'SessionTokens1732400000007',
      'SessionUse1732400000009',
      'UserChangeNotices1732400000010',
      'FeedCatalog1732400000012',
      'WebAccounts1732400000015',
      'AppPasswordForms1732400000017',
    ]);
    expect(MIGRATIONS_TABLE).toBe('castlog_migrations');
  });

  it("names each projection version's read model after its schema", () => {
    expect(recordedNames('castlog_v2').filter((name) => name.startsWith('ReadModel_'))).toEqual([
      'ReadModel_castlog_v2_1732400000002',
      'ReadModel_castlog_v2_1732400000006',
      'ReadModel_castlog_v2_1732400000008',
      'ReadModel_castlog_v2_1732400000011',
      'ReadModel_castlog_v2_1732400000013',
      'ReadModel_castlog_v2_1732400000014',
      'ReadModel_castlog_v2_1732400000016',
    ]);
  });
});
