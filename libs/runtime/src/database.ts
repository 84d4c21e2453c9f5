import {
  AppPasswordForms1732400000017,
  AuthTables1732400000000,
  RateLimitBuckets1732400000005,
  SessionTokens1732400000007,
  SessionUse1732400000009,
  TokenChangeNotices1732400000004,
  UserChangeNotices1732400000010,
  WebAccounts1732400000015,
} from '@castlog/auth';
import { EventLogTable1732400000001 } from '@castlog/event-log';
import { FeedCatalog1732400000012 } from '@castlog/feeds';
import { Database, ProjectionVersionsTable1732400000003, readModelMigrations } from '@castlog/read-model';
import { connectionSettings, quietClient } from '@castlog/supervision';
import { Client } from 'pg';
import { DataSource, MigrationInterface } from 'typeorm';

/** Serialises migration runs of processes that start together (API, projector, CLI). */
const MIGRATION_LOCK = 0x6361_6d67;

/** Where TypeORM records the migrations it ran (by class name). */
export const MIGRATIONS_TABLE = 'castlog_migrations';

/** Every schema a castlog database holds, assembled from the libraries that own them: the auth
 * tables, the table log, the projection versions, the read model in `schema`, and the feed catalog. The order and
 * the class names are recorded in existing databases' castlog_migrations: never change them. */
export function migrationsFor(schema: string): (new () => MigrationInterface)[] {
  return [
    AuthTables1732400000000,
    EventLogTable1732400000001,
    ProjectionVersionsTable1732400000003,
    TokenChangeNotices1732400000004,
    RateLimitBuckets1732400000005,
    ...readModelMigrations(schema),
    SessionTokens1732400000007,
    SessionUse1732400000009,
    UserChangeNotices1732400000010,
    FeedCatalog1732400000012,
    WebAccounts1732400000015,
    AppPasswordForms1732400000017,
  ];
}

/** How long a query waits for a connection before it fails (and its request answers 503). */
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

export function createDataSource(
  url: string,
  schema: string,
  poolSize = 10,
  connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    migrations: migrationsFor(schema),
    migrationsTableName: MIGRATIONS_TABLE,
    // The migration history lives in public whoever connects: a role named like a castlog schema
    // (role castlog, READ_MODEL_SCHEMA castlog) would otherwise put `$user` first in the search
    // path once that schema exists, and the next process would find no history and migrate again.
    schema: 'public',
    synchronize: false,
    logging: false,
    extra: { max: poolSize, ...connectionSettings(connectTimeoutMs) },
  });
}

/** Runs pending migrations, one process at a time. */
export async function migrate(dataSource: DataSource, url: string): Promise<void> {
  const lock = quietClient(new Client({ connectionString: url }));
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end();
  }
}

/** Opens the database at `url`, migrated (auth, table log, projection versions, and the read model
 * in `schema`). */
export async function openDatabaseAt(
  url: string,
  schema: string,
  poolSize = 10,
  connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
): Promise<Database> {
  const dataSource = createDataSource(url, schema, poolSize, connectTimeoutMs);
  await dataSource.initialize();
  try {
    await migrate(dataSource, url);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return { url, schema, dataSource, close: () => dataSource.destroy() };
}
