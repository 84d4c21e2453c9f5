import { Backoff, ignoreLog, LogFn, messageOf, pause } from '@castlog/supervision';
import { Pool, PoolClient } from 'pg';
import { decodeRecord, EncodedEnvelope, encodeEnvelope } from '../codec/envelope.codec';
import {
  ConsumeOptions,
  EventEnvelope,
  EventLog,
  LogBatch,
  LogPosition,
  LogRecord,
  RunningConsumer,
} from '../event-log.port';
import { ConsumerFailures } from '../consumer-failures';
import { GroupCommit } from '../group-commit';

/** The one cause of this reader's failures (see ConsumerFailures): it restarts whole on any. */
const LOG = 'log';
const CHANNEL = 'castlog_log_appended';
/** Serialises appenders so sequence numbers commit in order and readers never skip a gap. */
const APPEND_LOCK = 0x6361_7374;
const POLL_FALLBACK_MS = 1000;

interface EventRow {
  seq: string;
  key: string;
  type: string;
  version: number;
  event_id: string;
  request_id: string;
  /** The value's JSON text (`value::text`), checked as it is parsed (`decodeRecord`). */
  value: string;
  appended_at: string;
}

export interface PostgresEventLogOptions {
  readonly log?: LogFn;
}

/** The event log stored in a PostgreSQL table (`castlog_log.events`), for the embedded mode.
 * One partition; the offset is the row's sequence number; append time is raised to stay
 * monotonic, as Kafka's LogAppendTime is. */
export class PostgresEventLog implements EventLog {
  readonly partitions = 1;
  private readonly appends: GroupCommit<EncodedEnvelope, LogPosition>;
  private readonly stops = new Set<() => Promise<void>>();
  private readonly log: LogFn;

  constructor(
    private readonly pool: Pool,
    options: PostgresEventLogOptions = {},
  ) {
    this.log = options.log ?? ignoreLog;
    this.appends = new GroupCommit((encoded) => this.insert(encoded), {
      maxItems: 5000,
      maxBytes: 8 * 1024 * 1024,
      sizeOf: (encoded) => encoded.bytes,
    });
  }

  async append(envelopes: readonly EventEnvelope[]): Promise<LogPosition[]> {
    return this.appends.submit(envelopes.map(encodeEnvelope));
  }

  private async insert(encoded: EncodedEnvelope[]): Promise<LogPosition[]> {
    const envelopes = encoded.map(({ envelope }) => envelope);
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK]);
      const { rows } = await client.query<{ last_seq: string | null; last_at: string | null; now: string }>(
        `SELECT last.seq AS last_seq, last.appended_at AS last_at,
                (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now
           FROM (SELECT 1) AS one
           LEFT JOIN (SELECT seq, appended_at FROM castlog_log.events ORDER BY seq DESC LIMIT 1) AS last ON true`,
      );
      const row = rows[0];
      const first = row?.last_seq == null ? 0 : Number(row.last_seq) + 1;
      const appendedAt = Math.max(Number(row?.now ?? 0), Number(row?.last_at ?? 0));
      await client.query(
        `INSERT INTO castlog_log.events (seq, key, type, version, event_id, request_id, value, appended_at)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::uuid[], $6::text[], $7::jsonb[], $8::bigint[])`,
        [
          envelopes.map((_, i) => first + i),
          envelopes.map((e) => e.key),
          envelopes.map((e) => e.type),
          envelopes.map((e) => e.version),
          envelopes.map((e) => e.eventId),
          envelopes.map((e) => e.requestId),
          encoded.map(({ value }) => value),
          envelopes.map(() => appendedAt),
        ],
      );
      await client.query(`SELECT pg_notify($1, $2)`, [CHANNEL, String(first + envelopes.length)]);
      await client.query('COMMIT');
      return envelopes.map((_, i) => ({ partition: 0, offset: first + i }));
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  private async read(
    client: Pool | PoolClient,
    from: number,
    until: number,
    limit: number,
  ): Promise<LogRecord[]> {
    const { rows } = await client.query<EventRow>(
      `SELECT seq, key, type, version, event_id, request_id, value::text AS value, appended_at
         FROM castlog_log.events WHERE seq >= $1 AND seq < $2 ORDER BY seq LIMIT $3`,
      [from, until, limit],
    );
    return rows.map((row) => {
      const headers = {
        type: row.type,
        version: row.version,
        eventId: row.event_id,
        requestId: row.request_id,
      };
      return decodeRecord(headers, row.value, {
        key: row.key,
        partition: 0,
        offset: Number(row.seq),
        timestamp: Number(row.appended_at),
      });
    });
  }

  /** Reads from the caller's stored position and hands batches over in order, woken by the
   * appenders' NOTIFY (polling once a second as a fallback). Any failure — of the handler, a read,
   * or the listening connection — is reported to `onError` and retried with capped backoff from
   * the caller's stored position (`startFrom` again), for as long as it takes. */
  async consume(options: ConsumeOptions): Promise<RunningConsumer> {
    const stopped = new AbortController();
    let wake: (() => void) | undefined;
    const backoff = new Backoff();
    const failures = new ConsumerFailures(options);

    const follow = async (): Promise<void> => {
      const listener = await this.pool.connect();
      let broken: Error | undefined;
      const onNotification = () => wake?.();
      const onError = (error: Error) => {
        broken = error;
        wake?.();
      };
      listener.on('notification', onNotification);
      listener.on('error', onError);
      try {
        await listener.query(`LISTEN ${CHANNEL}`);
        let next = await options.startFrom(0);
        const limit = options.maxBatchSize ?? 2000;
        while (!stopped.signal.aborted) {
          if (broken) throw broken;
          const records = await this.read(this.pool, next, Number.MAX_SAFE_INTEGER, limit);
          if (records.length > 0) await options.handle({ partition: 0, records });
          failures.cleared(LOG);
          backoff.reset();
          if (records.length > 0) {
            next = (records[records.length - 1] as LogRecord).offset + 1;
            continue;
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, POLL_FALLBACK_MS);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
        await listener.query(`UNLISTEN ${CHANNEL}`);
      } catch (error) {
        broken ??= error instanceof Error ? error : new Error(String(error));
        throw error;
      } finally {
        listener.off('notification', onNotification);
        listener.off('error', onError);
        // A client whose connection broke goes back with the error, and the pool discards it.
        listener.release(broken);
      }
    };

    const loop = (async () => {
      while (!stopped.signal.aborted) {
        try {
          await follow();
        } catch (error) {
          if (stopped.signal.aborted) return;
          const delayMs = backoff.next();
          failures.failed(LOG, error);
          this.log(
            'warn',
            `${options.group}: consuming failed (${messageOf(error)}); retrying in ${Math.round(delayMs)} ms`,
          );
          await pause(delayMs, stopped.signal);
        }
      }
    })();

    const stop = async () => {
      stopped.abort();
      wake?.();
      await loop;
      this.stops.delete(stop);
    };
    this.stops.add(stop);
    return { stop };
  }

  async endOffsets(): Promise<Map<number, number>> {
    const { rows } = await this.pool.query<{ next: string }>(
      `SELECT coalesce(max(seq) + 1, 0) AS next FROM castlog_log.events`,
    );
    return new Map([[0, Number(rows[0]?.next ?? 0)]]);
  }

  async readToEnd(handle: (batch: LogBatch) => Promise<void>, from?: Map<number, number>): Promise<void> {
    const end = (await this.endOffsets()).get(0) ?? 0;
    let next = from?.get(0) ?? 0;
    while (next < end) {
      const records = await this.read(this.pool, next, end, 5000);
      if (records.length === 0) break;
      await handle({ partition: 0, records });
      next = (records[records.length - 1] as LogRecord).offset + 1;
    }
  }

  /** Stops the readers; the pool belongs to the caller. */
  async close(): Promise<void> {
    await Promise.all([...this.stops].map((stop) => stop()));
  }
}
