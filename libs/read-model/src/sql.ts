/** The one thing the projection needs from a database connection inside a transaction. */
export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
