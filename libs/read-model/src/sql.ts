import { escapeLiteral, type Pool, type QueryResult } from 'pg';
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
  /** Statements sent with BEGIN in one round trip (so without parameters: values in them are
   * literals, `sqlLiteral`); `work` gets the rows of each. A round trip is most of what a short
   * statement costs. */
  readonly opening?: readonly string[];
}

/** A value as an SQL literal, for statements that cannot take parameters (`opening`): text quoted
 * and escaped as PostgreSQL reads it, a number as itself, an array as an array literal. */
export const sqlLiteral = (value: string | number | readonly (string | number)[]): string => {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
    return String(value);
  }
  if (typeof value === 'string') return escapeLiteral(value);
  return `ARRAY[${value.map((element) => sqlLiteral(element)).join(',')}]`;
};

/** The one way castlog runs a transaction: `work` on a client of the data source's pool
 * (`poolOf`), BEGIN, then COMMIT, or ROLLBACK when `work` or the commit fails. A client whose
 * rollback fails is broken and goes back to the pool with the error, which discards it. The
 * projector's batches, the deletion saga's cascade, the projection switch and the replay's
 * comparison snapshot all run through it. */
export async function inTransaction<T>(
  dataSource: DataSource,
  work: (sql: Sql, opened: Record<string, unknown>[][]) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const client = await poolOf(dataSource).connect();
  let open = false;
  let broken: Error | undefined;
  try {
    const begin = options.isolation ? `BEGIN ISOLATION LEVEL ${options.isolation}` : 'BEGIN';
    const opening = options.opening ?? [];
    // Open before the round trip: BEGIN may succeed and a statement after it fail.
    open = true;
    // Several statements in one query answer a result each (pg's simple query protocol).
    const results: unknown = await client.query([begin, ...opening].join(';\n'));
    const opened = opening.length === 0 ? [] : (results as QueryResult[]).slice(1).map((r) => r.rows);
    const result = await work(
      { query: async (text, params) => (await client.query(text, params)).rows },
      opened,
    );
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
