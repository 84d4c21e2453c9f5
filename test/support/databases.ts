import { randomBytes } from 'node:crypto';
import { authMigrations } from '@castlog/auth';
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
