import { quoteIdent, Sql } from '../sql';

/** Events applied to the projection in `schema` (its offsets summed: the log has no gaps) and the
 * subscriptions it holds. */
export async function projectionCounts(
  sql: Sql,
  schema: string,
): Promise<{ events: number; subscriptions: number }> {
  const s = quoteIdent(schema);
  const [row] = await sql.query<{ events: string; subscriptions: string }>(
    `SELECT (SELECT coalesce(sum(next_offset), 0) FROM ${s}.projection_offsets)::bigint AS events,
            (SELECT count(*) FROM ${s}.subscriptions)::bigint AS subscriptions`,
  );
  return { events: Number(row?.events), subscriptions: Number(row?.subscriptions) };
}

/** Whether `schema` holds a projection (its offsets table). */
export async function hasProjection(sql: Sql, schema: string): Promise<boolean> {
  const rows = await sql.query(
    `SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'projection_offsets'`,
    [schema],
  );
  return rows.length > 0;
}
