import type { Pool, QueryResult } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { binaryArray, ElementOf, ElementType } from './binary-array';

/** The one thing the projection needs from a database connection inside a transaction. */
export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The longest name PostgreSQL keeps whole: it cuts a longer one to this many bytes without an
 * error, so two names that differ only past it name the same object. */
export const MAX_NAME_LENGTH = 63;

/** The pg pool under a TypeORM data source. The hot paths (the projector's transactions, the
 * outcome reads) query it directly: TypeORM's query runner adds per-statement bookkeeping (events,
 * logging, result wrapping) that measurably slowed the write path. */
export const poolOf = (dataSource: DataSource): Pool => (dataSource.driver as PostgresDriver).master as Pool;

/** The rows one statement answers, run on the pool (no transaction): how the stores' reads run. */
export const poolRows = async <T>(dataSource: DataSource, text: string, params: unknown[]): Promise<T[]> =>
  (await poolOf(dataSource).query(text, params)).rows as T[];

export interface TransactionOptions {
  /** PostgreSQL's default (READ COMMITTED) unless given. */
  readonly isolation?: 'REPEATABLE READ' | 'SERIALIZABLE';
  /** Statements sent with BEGIN in one round trip (so without parameters: values in them are
   * literals, `sqlLiteral`); `work` gets the rows of each. A round trip is most of what a short
   * statement costs. */
  readonly opening?: readonly string[];
}

type Scalar = string | number | boolean | null;

/** An array a statement takes, of one element type: `texts(['a', null])`. */
export interface SqlArray<T extends ElementType = ElementType> {
  readonly type: T;
  readonly values: readonly (ElementOf<T> | null)[];
}

const arrayOf =
  <T extends ElementType>(type: T) =>
  (values: readonly (ElementOf<T> | null)[]): SqlArray<T> => ({ type, values });
export const texts = arrayOf('text');
export const uuids = arrayOf('uuid');
export const bigints = arrayOf('bigint');
export const ints = arrayOf('int');
export const booleans = arrayOf('boolean');

/** A value a statement takes: a scalar, or an array of one element type. */
export type SqlValue = Scalar | SqlArray;

/** Adds a value to the statement being built and answers what stands for it there: a placeholder
 * (`parameters`) or the value itself (`sqlLiteral`); an array's, cast to its type (`$2::uuid[]`). */
export type Param = (value: SqlValue) => string;

const isArray = (value: SqlValue): value is SqlArray => value !== null && typeof value === 'object';

/** Placeholders `$1`, `$2`… and the values they stand for, in order: an array in PostgreSQL's
 * binary array format (`binaryArray`), which the server reads at less cost than the array's text. */
export const parameters = (): { readonly param: Param; readonly params: (Scalar | Buffer)[] } => {
  const params: (Scalar | Buffer)[] = [];
  return {
    param: (value) =>
      isArray(value)
        ? `$${params.push(binaryArray(value.type, value.values))}::${value.type}[]`
        : `$${params.push(value)}`,
    params,
  };
};

const quoted = (text: string): string => {
  if (text.includes('\u0000')) throw new Error('text holds U+0000, which PostgreSQL cannot store');
  const doubled = text.replace(/'/g, "''");
  // As pg's escapeLiteral: backslashes doubled in an E'' string read the same whatever
  // standard_conforming_strings says.
  return text.includes('\\') ? ` E'${doubled.replace(/\\/g, '\\\\')}'` : `'${doubled}'`;
};

const ARRAY_ESCAPED = /[\\"]/;

const arrayElement = (value: Scalar): string => {
  if (value === null) return 'NULL';
  const text = scalarText(value);
  return ARRAY_ESCAPED.test(text) ? `"${text.replace(/[\\"]/g, '\\$&')}"` : `"${text}"`;
};

/** An array literal, every element quoted and null as NULL (`{"a","b",NULL}`). */
const arrayText = (values: readonly Scalar[]): string => {
  let text = '{';
  for (let i = 0; i < values.length; i += 1) text += (i === 0 ? '' : ',') + arrayElement(values[i] as Scalar);
  return `${text}}`;
};

const scalarText = (value: Exclude<Scalar, null>): string => {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
  return String(value);
};

/** A value as an SQL literal, for statements sent without parameters (`opening`, `queryAndCommit`):
 * what pg would send as the parameter, quoted, so it means the same where the statement casts it
 * or where its type is inferred. An array is an array literal cast to its type
 * (`'{"a","b",NULL}'::text[]`), null is NULL. */
export const sqlLiteral: Param = (value) => {
  if (value === null) return 'NULL';
  if (isArray(value)) return `${quoted(arrayText(value.values))}::${value.type}[]`;
  return quoted(scalarText(value));
};

/** A transaction's connection, as `inTransaction` gives it to its work. */
export interface TransactionSql extends Sql {
  /** `text` (values as literals: `sqlLiteral`) and COMMIT in one round trip: the transaction ends
   * with it, committed when `text` succeeds, rolled back when it fails. Answers the rows of `text`. */
  queryAndCommit<T = Record<string, unknown>>(text: string): Promise<T[]>;
}

/** The one way castlog runs a transaction: `work` on a client of the data source's pool
 * (`poolOf`), BEGIN, then COMMIT, or ROLLBACK when `work` or the commit fails. A client whose
 * rollback fails is broken and goes back to the pool with the error, which discards it. The
 * projector's batches, the deletion saga's cascade, the projection switch and the replay's
 * comparison snapshot all run through it. */
export async function inTransaction<T>(
  dataSource: DataSource,
  work: (sql: TransactionSql, opened: Record<string, unknown>[][]) => Promise<T>,
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
    const ended = () => {
      if (!open) throw new Error('the transaction has ended');
    };
    const result = await work(
      {
        query: async (text, params) => {
          ended();
          return (await client.query(text, params)).rows;
        },
        queryAndCommit: async <R>(text: string) => {
          ended();
          // The server runs COMMIT only once `text` has succeeded; if COMMIT itself fails, the
          // ROLLBACK below meets no transaction, which PostgreSQL answers with a warning.
          const [rows] = (await client.query(`${text};\nCOMMIT`)) as unknown as QueryResult[];
          open = false;
          return (rows?.rows ?? []) as R[];
        },
      },
      opened,
    );
    if (open) {
      await client.query('COMMIT');
      open = false;
    }
    return result;
  } catch (error) {
    if (open) await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
    throw error;
  } finally {
    client.release(broken);
  }
}

/** The pool under a data source now: how many connections it may open, how many are handed out,
 * and how many queries wait for one. */
export interface PoolUse {
  readonly size: number;
  readonly inUse: number;
  readonly waiting: number;
}

export const poolUse = (dataSource: DataSource): PoolUse => {
  const pool = poolOf(dataSource);
  return {
    size: pool.options.max ?? 10,
    inUse: pool.totalCount - pool.idleCount,
    waiting: pool.waitingCount,
  };
};

/** `work` on one client of the data source's pool, released after it (discarded when a query
 * failed, as pg's own `pool.query` does); `connected` is called once the pool has handed the client
 * over, so that a caller can tell waiting for a connection from waiting for an answer. */
export async function onPooledClient<T>(
  dataSource: DataSource,
  work: (sql: Sql) => Promise<T>,
  connected?: () => void,
): Promise<T> {
  const client = await poolOf(dataSource).connect();
  connected?.();
  let failure: Error | undefined;
  try {
    return await work({ query: async (text, params) => (await client.query(text, params)).rows });
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.release(failure);
  }
}
