import { EventLog } from '@castlog/event-log';
import { Sql, storedOffsets } from '@castlog/read-model';

/** Whether the projection in `schema` has applied everything the log holds: its stored offset is
 * the log's end in every partition. A check for `until` or `poll`. */
export async function projectionAtEnd(
  eventLog: Pick<EventLog, 'endOffsets'>,
  sql: Sql,
  schema: string,
): Promise<boolean> {
  const [end, stored] = await Promise.all([eventLog.endOffsets(), storedOffsets(sql, schema)]);
  return [...end].every(([partition, next]) => (stored.get(partition) ?? 0) === next);
}
