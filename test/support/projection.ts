import { EventLog } from '@castlog/event-log';
import { OffsetWatch, Sql, storedOffsets } from '@castlog/read-model';

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

/** Waits until the projection in `schema` has applied everything the log holds, through the
 * OffsetWatch the API waits with: reached, the log's end is read again, as appends may have come
 * meanwhile (a deletion's result). Fails after `timeoutMs`. */
export async function untilProjectionAtEnd(
  databaseUrl: string,
  eventLog: Pick<EventLog, 'endOffsets'>,
  sql: Sql,
  schema: string,
  timeoutMs = 20_000,
): Promise<void> {
  const watch = new OffsetWatch(databaseUrl, sql, { component: 'test offsets', schema: () => schema });
  await watch.start();
  try {
    const deadline = Date.now() + timeoutMs;
    let end = await eventLog.endOffsets();
    for (;;) {
      const { reached } = await watch.reach(end, Math.max(0, deadline - Date.now()));
      if (!reached)
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for the projection to reach the end of the log`,
        );
      const now = await eventLog.endOffsets();
      if ([...now].every(([partition, next]) => end.get(partition) === next)) return;
      end = now;
    }
  } finally {
    await watch.close();
  }
}
