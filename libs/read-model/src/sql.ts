import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/** The one thing the projection needs from a database connection inside a transaction. */
export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The pg pool under a TypeORM data source. The hot paths (the projector's transactions, the
 * outcome reads) query it directly: TypeORM's query runner adds per-statement bookkeeping (events,
 * logging, result wrapping) that measurably slowed the write path. */
export const poolOf = (dataSource: DataSource): Pool => (dataSource.driver as PostgresDriver).master as Pool;

export interface TransactionOptions {
  /** PostgreSQL's default (READ COMMITTED) unless given. */
  readonly isolation?: 'REPEATABLE READ' | 'SERIALIZABLE';
}

/** The one way castlog runs a transaction: `work` on a client of the data source's pool
 * (`poolOf`), BEGIN, then COMMIT, or ROLLBACK when `work` or the commit fails. A client whose
 * rollback fails is broken and goes back to the pool with the error, which discards it. The
 * projector's batches, the deletion saga's cascade, the projection switch and the replay's
 * comparison snapshot all run through it. */
export async function inTransaction<T>(
  dataSource: DataSource,
  work: (sql: Sql) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const client = await poolOf(dataSource).connect();
  let open = false;
  let broken: Error | undefined;
  try {
    await client.query(options.isolation ? `BEGIN ISOLATION LEVEL ${options.isolation}` : 'BEGIN');
    open = true;
    const result = await work({ query: async (text, params) => (await client.query(text, params)).rows });
    await client.query('COMMIT');
    open = false;
    return result;
  } catch (error) {
    if (open) await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
    throw error;
  } finally {
    client.release(broken);
  }
}
