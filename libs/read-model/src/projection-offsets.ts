import { quoteIdent, Sql } from './sql';

/** The projection's stored offsets: the next offset to apply in each partition. These, not
 * Kafka's committed offsets, decide where consumption resumes. */
export async function storedOffset(sql: Sql, schema: string, partition: number): Promise<number> {
  const rows = await sql.query<{ next_offset: string }>(
    `SELECT next_offset FROM ${quoteIdent(schema)}.projection_offsets WHERE partition = $1`,
    [partition],
  );
  return Number(rows[0]?.next_offset ?? 0);
}

export async function storedOffsets(sql: Sql, schema: string): Promise<Map<number, number>> {
  const rows = await sql.query<{ partition: number; next_offset: string }>(
    `SELECT partition, next_offset FROM ${quoteIdent(schema)}.projection_offsets`,
  );
  return new Map(rows.map((row) => [row.partition, Number(row.next_offset)]));
}

/** Events `offsets` still lacks to reach `target` (offsets per partition), over all partitions. */
export const deficit = (target: Map<number, number>, offsets: Map<number, number>): number =>
  [...target].reduce((sum, [partition, next]) => sum + Math.max(0, next - (offsets.get(partition) ?? 0)), 0);
