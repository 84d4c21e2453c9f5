import { EventLogTable1732400000001 } from '@castlog/event-log';
import { connectionSettings, quietClient } from '@castlog/supervision';
import { Client } from 'pg';
import { DataSource, MigrationInterface } from 'typeorm';
import {
  AuthTables1732400000000,
  RateLimitBuckets1732400000005,
  TokenChangeNotices1732400000004,
} from '@castlog/auth';
import { ProjectionVersionsTable1732400000003 } from './migrations/1732400000003-projection-versions';
import { readModelMigrations } from './migrations/read-model.migration';
import { ActiveProjection, ProjectionVersions } from './projection-versions';

/** Serialises migration runs of processes that start together (API, projector, CLI). */
const MIGRATION_LOCK = 0x6361_6d67;

export function migrationsFor(schema: string): (new () => MigrationInterface)[] {
  return [
    AuthTables1732400000000,
    EventLogTable1732400000001,
    ProjectionVersionsTable1732400000003,
    TokenChangeNotices1732400000004,
    RateLimitBuckets1732400000005,
    ...readModelMigrations(schema),
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
    migrationsTableName: 'castlog_migrations',
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

export interface Database {
  readonly url: string;
  /** The schema of this process's own projection version (PROJECTION_VERSION); reads go to the
   * active version, which an ActiveProjection follows. */
  readonly schema: string;
  readonly dataSource: DataSource;
  close(): Promise<void>;
}

/** Opens the read-model database at `url`, migrated. */
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

/** The version reads are served from: the registered active one, or — in a read model that has
 * none yet — `version`, registered as active (its schema must exist). */
export async function openActiveProjection(
  database: Database,
  base: string,
  version: number,
): Promise<ActiveProjection> {
  const versions = new ProjectionVersions(database.dataSource, base);
  const active = (await versions.active()) ?? (await versions.register(version));
  return new ActiveProjection(versions, active);
}
