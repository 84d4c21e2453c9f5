import { encodeValue, EventEnvelope, EventLog } from '@castlog/event-log';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import { round } from './stats';

/** Rows inserted, updated (HOT included) and deleted in one table, from pg_stat_user_tables. */
export interface TableWrites {
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
}

async function readTableWrites(db: Pool, schema: string): Promise<Record<string, TableWrites>> {
  const { rows } = await db.query<{ relname: string; ins: string; upd: string; del: string }>(
    `SELECT relname, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_del::text AS del
       FROM pg_stat_user_tables WHERE schemaname = $1 ORDER BY relname`,
    [schema],
  );
  return Object.fromEntries(
    rows.map((row) => [
      row.relname,
      { inserted: Number(row.ins), updated: Number(row.upd), deleted: Number(row.del) },
    ]),
  );
}

/** The rows written so far in every table of `schema`. A backend publishes its counts when it
 * goes idle, but no sooner than a second after its previous report, and then only 10 s later
 * (PGSTAT_MIN_INTERVAL, PGSTAT_IDLE_INTERVAL): the snapshot is taken once the counts have not moved
 * for `quietMs` (11 s by default), or after `maxMs`. Pass 0 for a schema nothing has written to. */
export async function tableWrites(
  db: Pool,
  schema: string,
  quietMs = 11_000,
  maxMs = 45_000,
): Promise<Record<string, TableWrites>> {
  const started = performance.now();
  let last = await readTableWrites(db, schema);
  let unchangedSince = performance.now();
  while (performance.now() - unchangedSince < quietMs && performance.now() - started < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const next = await readTableWrites(db, schema);
    if (JSON.stringify(next) !== JSON.stringify(last)) {
      last = next;
      unchangedSince = performance.now();
    }
  }
  return last;
}

/** Rows written per event between two snapshots, in all and by table. */
export function rowsPerEvent(
  before: Record<string, TableWrites>,
  after: Record<string, TableWrites>,
  events: number,
): {
  events: number;
  rows_written: number;
  rows_written_per_event: number;
  by_table: Record<string, TableWrites & { per_event: number }>;
} {
  const byTable: Record<string, TableWrites & { per_event: number }> = {};
  let total = 0;
  for (const [table, writes] of Object.entries(after)) {
    const was = before[table] ?? { inserted: 0, updated: 0, deleted: 0 };
    const delta = {
      inserted: writes.inserted - was.inserted,
      updated: writes.updated - was.updated,
      deleted: writes.deleted - was.deleted,
    };
    const rows = delta.inserted + delta.updated + delta.deleted;
    if (rows === 0) continue;
    total += rows;
    byTable[table] = { ...delta, per_event: events > 0 ? round(rows / events, 3) : Number.NaN };
  }
  return {
    events,
    rows_written: total,
    rows_written_per_event: events > 0 ? round(total / events, 3) : Number.NaN,
    by_table: byTable,
  };
}

/** What one record carries in the log: its key, its value (the event's JSON) and its headers
 * (names and values), as the adapter sends them, without the log's own framing. */
export const recordBytes = (record: EventEnvelope): number =>
  [
    record.key,
    encodeValue(record.value),
    'type',
    record.type,
    'version',
    String(record.version),
    'eventId',
    record.eventId,
    'requestId',
    record.requestId,
  ].reduce((sum, text) => sum + Buffer.byteLength(text), 0);

/** Reads the records from `from` to the log's end and sums their message bytes. */
export async function recordBytesSince(
  eventLog: EventLog,
  from: Map<number, number>,
): Promise<{ events: number; bytes: number }> {
  let events = 0;
  let bytes = 0;
  await eventLog.readToEnd(async (batch) => {
    for (const record of batch.records) {
      events += 1;
      bytes += recordBytes(record);
    }
  }, from);
  return { events, bytes };
}

/** Bytes of the topic's segment files (`*.log`) in the broker's log directory; undefined when the
 * broker's directory is not known here. Index files are preallocated, so they are left out. */
export function topicDiskBytes(logDir: string | undefined, topic: string): number | undefined {
  if (!logDir || !existsSync(logDir)) return undefined;
  let bytes = 0;
  for (const entry of readdirSync(logDir)) {
    if (!entry.startsWith(`${topic}-`) || !/^\d+$/.test(entry.slice(topic.length + 1))) continue;
    const dir = join(logDir, entry);
    for (const file of readdirSync(dir)) {
      if (file.endsWith('.log')) bytes += statSync(join(dir, file)).size;
    }
  }
  return bytes;
}

export const total = (offsets: Map<number, number>): number =>
  [...offsets.values()].reduce((sum, offset) => sum + offset, 0);
