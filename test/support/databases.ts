import { randomBytes } from 'node:crypto';
import { authMigrations } from '@castlog/auth';
import { onServer } from '@castlog/infra';
import { Client } from 'pg';
import { DataSource } from 'typeorm';

/** A unique lower-case name, so test files running in parallel never share a database or topic. */
export const uniqueName = (prefix: string): string =>
  `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

/** Creates an empty database on the test server (DATABASE_URL, set by test/infra/global-setup)
 * and answers its URL. */
export async function createTestDatabase(prefix = 'castlog_test'): Promise<string> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl)
    throw new Error('DATABASE_URL is not set: run the tests through jest (test/infra/global-setup.ts)');
  const name = uniqueName(prefix);
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A fresh database holding only the auth tables, as a TypeORM DataSource (for the auth and CLI
 * specs, which need no event log or read model). */
export async function openAuthTestDatabase(prefix: string): Promise<DataSource> {
  const dataSource = new DataSource({
    type: 'postgres',
    url: await createTestDatabase(prefix),
    migrations: authMigrations,
    migrationsRun: true,
  });
  return dataSource.initialize();
}

/** What an operator's `pg_terminate_backend`, a failover or a proxy's idle reaper does: ends every
 * connection to `database` but the one asking. Answers how many were ended. */
export async function terminateBackends(serverUrl: string, database: string): Promise<number> {
  const { rowCount } = await onServer(serverUrl, (admin) =>
    admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    ),
  );
  return rowCount ?? 0;
}
