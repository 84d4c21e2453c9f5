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
