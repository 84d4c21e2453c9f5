import type { DataSource } from 'typeorm';

/** The id of the user named `name`, or whose id is `id` (null: `name` is not a UUID); undefined
 * when there is none. */
export async function findUserId(
  sql: Pick<DataSource, 'query'>,
  name: string,
  id: string | null,
): Promise<string | undefined> {
  const rows: { id: string }[] = await sql.query(
    `SELECT id FROM castlog_auth.users WHERE name = $1
     UNION ALL
     SELECT id FROM castlog_auth.users WHERE $2::uuid IS NOT NULL AND id = $2::uuid
     LIMIT 1`,
    [name, id],
  );
  return rows[0]?.id;
}
