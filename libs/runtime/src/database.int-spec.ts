import { Database } from '@castlog/read-model';
import { createTestDatabase } from '../../../test/support/databases';
import { openDatabaseAt } from './database';

const recorded = async (database: Database): Promise<string[]> =>
  (await database.dataSource.query(`SELECT name FROM castlog_migrations ORDER BY name`)).map(
    (row: { name: string }) => row.name,
  );

describe('openDatabaseAt', () => {
  const opened: Database[] = [];
  afterAll(async () => {
    for (const database of opened) await database.close();
  });
  const open = async (url: string, schema: string) => {
    const database = await openDatabaseAt(url, schema, 2);
    opened.push(database);
    return database;
  };

  it('migrates a fresh database once, however many processes open it together', async () => {
    const url = await createTestDatabase('runtime_database');
    const [first] = await Promise.all([open(url, 'castlog'), open(url, 'castlog'), open(url, 'castlog')]);
    expect(await recorded(first!)).toEqual([
      'AppPasswordForms1732400000017',
      'AuthTables1732400000000',
      'EventLogTable1732400000001',
      'FeedCatalog1732400000012',
      'ProjectionVersionsTable1732400000003',
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
      'TokenChangeNotices1732400000004',
      'UserChangeNotices1732400000010',
      'WebAccounts1732400000015',
    ]);
    const [tables] = await first!.dataSource.query(
      `SELECT to_regclass('castlog_auth.users') IS NOT NULL AS auth,
              to_regclass('castlog_log.events') IS NOT NULL AS log,
              to_regclass('castlog_projections.versions') IS NOT NULL AS versions,
              to_regclass('castlog.subscriptions') IS NOT NULL AS read_model,
              to_regclass('castlog_feeds.feeds') IS NOT NULL AS feeds`,
    );
    expect(tables).toEqual({ auth: true, log: true, versions: true, read_model: true, feeds: true });
    expect(first).toEqual(expect.objectContaining({ url, schema: 'castlog' }));
  });

  it("adds a new projection version's read model beside the existing one", async () => {
    const url = await createTestDatabase('runtime_database');
    await open(url, 'castlog');
    const v2 = await open(url, 'castlog_v2');
    expect(await recorded(v2)).toContain('ReadModel_castlog_v2_1732400000002');
    expect(await recorded(v2)).toContain('ReadModel_castlog_v2_1732400000006');
    expect(await recorded(v2)).toContain('ReadModel_castlog_v2_1732400000008');
    expect(await recorded(v2)).toContain('ReadModel_castlog_v2_1732400000011');
    expect(await recorded(v2)).toContain('ReadModel_castlog_v2_1732400000013');
    expect(await recorded(v2)).toContain('ReadModel_castlog_v2_1732400000014');
    expect(await recorded(v2)).toContain('ReadModel_castlog_v2_1732400000016');
    expect((await recorded(v2)).length).toBe(25);
    const [table] = await v2.dataSource.query(
      `SELECT to_regclass('castlog_v2.subscriptions') IS NOT NULL AS found`,
    );
    expect(table.found).toBe(true);
  });
});
