import { DataSource } from 'typeorm';
import { createTestDatabase } from '../../../../test/support/databases';
import { Database } from '../database';
import { ProjectionVersionsTable1732400000003 } from '../migrations/1732400000003-projection-versions';
import { readModelMigrations } from '../migrations/read-model.migration';
import { OFFSETS_CHANNEL } from '../notifications';
import { quoteIdent, Sql } from '../sql';

/** A fresh database holding only what the read model migrates itself: the projection versions and
 * the read-model tables in each of `schemas` (the first is the handle's own). */
export async function openReadModelTestDatabase(
  prefix: string,
  schemas: readonly string[],
): Promise<Database> {
  const url = await createTestDatabase(prefix);
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations: [ProjectionVersionsTable1732400000003, ...schemas.flatMap(readModelMigrations)],
    migrationsTableName: 'read_model_test_migrations',
    extra: { max: 6 },
  });
  await dataSource.initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  return { url, schema: schemas[0] ?? 'castlog', dataSource, close: () => dataSource.destroy() };
}

/** What a projector transaction stores for `schema`, as the projector does: the partitions' next
 * offsets and, when `notify`, their notices on OFFSETS_CHANNEL (sent at commit). */
export async function storeOffsets(
  sql: Sql,
  schema: string,
  offsets: Record<number, number>,
  { notify = true }: { notify?: boolean } = {},
): Promise<void> {
  const entries = Object.entries(offsets).map(([partition, next]) => [Number(partition), next] as const);
  await sql.query(
    `INSERT INTO ${quoteIdent(schema)}.projection_offsets (partition, next_offset)
     SELECT * FROM unnest($1::int[], $2::bigint[])
     ON CONFLICT (partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`,
    [entries.map(([partition]) => partition), entries.map(([, next]) => next)],
  );
  if (notify)
    for (const [partition, next] of entries)
      await sql.query('SELECT pg_notify($1, $2)', [
        OFFSETS_CHANNEL,
        JSON.stringify({ schema, partition, next }),
      ]);
}
