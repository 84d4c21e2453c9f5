import { ignoreLog, LogFn, messageOf, NotificationListener, retry, Wakeup } from '@castlog/supervision';
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
import { FETCH_BYTES_PER_PARTITION } from '../kafka/kafka-options';

/** The one cause of this reader's failures (see ConsumerFailures): it reads from its stored
 * position again on any. */
const LOG = 'log';
const CHANNEL = 'castlog_log_appended';
/** How long an idle reader waits for a notice before reading anyway. */
const SAFETY_READ_MS = 30_000;
/** The bytes of events a read hands over at most (and one event more): as much as a Kafka fetch
 * asks of a partition. */
const READ_BYTES = FETCH_BYTES_PER_PARTITION;
/** Serialises appenders so sequence numbers commit in order and readers never skip a gap. */
const APPEND_LOCK = 0x6361_7374;

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

  /** At most `limit` records from `from` (up to `until`), and no more after READ_BYTES of them:
   * a batch is what a Kafka fetch takes of a partition, however large its events, so that the
   * projector's transaction over it stays within what PostgreSQL takes in one statement. */
  private async read(
    client: Pool | PoolClient,
    from: number,
    until: number,
    limit: number,
  ): Promise<LogRecord[]> {
    const { rows } = await client.query<EventRow>(
      `SELECT seq, key, type, version, event_id, request_id, value, appended_at
         FROM (SELECT page.*, sum(octet_length(value)) OVER (ORDER BY seq) - octet_length(value) AS bytes_before
                 FROM (SELECT seq, key, type, version, event_id, request_id, value::text AS value, appended_at
                         FROM castlog_log.events WHERE seq >= $1 AND seq < $2 ORDER BY seq LIMIT $3) AS page
              ) AS sized
        WHERE bytes_before < $4
        ORDER BY seq`,
      [from, until, limit, READ_BYTES],
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
   * appenders' NOTIFY (a NotificationListener, which after a lost connection reconnects and wakes
   * the reader to catch up). Any failure — of the handler, a read, or the listening connection —
   * is reported to `onError`; a failed read or handler is retried with capped backoff from the
   * caller's stored position (`startFrom` again), for as long as it takes. */
  async consume(options: ConsumeOptions): Promise<RunningConsumer> {
    const stopped = new AbortController();
    const appended = new Wakeup();
    const failures = new ConsumerFailures(options);
    const listener = new NotificationListener(
      this.pool.options,
      [CHANNEL],
      {
        notice: () => appended.ring(),
        listening: async () => appended.ring(),
        lost: (error) => failures.failed(LOG, error),
      },
      {
        component: `${options.group}: log notices`,
        log: this.log,
        connectTimeoutMs: this.pool.options.connectionTimeoutMillis,
      },
    );
    const loop = this.follow(options, listener, failures, appended, stopped.signal);
    const stop = async () => {
      stopped.abort();
      await loop;
      await listener.close();
      this.stops.delete(stop);
    };
    this.stops.add(stop);
    return { stop };
  }

  /** Hands over what the table holds from the caller's stored position and waits for the next
   * append, until `stopped`. Each read and its handling is one attempt of `retry`, so the backoff
   * starts afresh after every success; after a failure, the position is asked for again. */
  private async follow(
    options: ConsumeOptions,
    listener: NotificationListener,
    failures: ConsumerFailures,
    appended: Wakeup,
    stopped: AbortSignal,
  ): Promise<void> {
    const limit = options.maxBatchSize ?? 2000;
    let started = false;
    let next: number | undefined;
    const step = async (): Promise<LogRecord[]> => {
      if (!started) await listener.start();
      started = true;
      if (stopped.aborted) return [];
      next ??= await options.startFrom(0);
      const records = await this.read(this.pool, next, Number.MAX_SAFE_INTEGER, limit);
      if (records.length > 0) await options.handle({ partition: 0, records });
      // Deaf, the reader would miss appends: it has not recovered until it hears them again.
      if (listener.isListening) failures.cleared(LOG);
      return records;
    };
    const failed = (error: unknown, _failures: number, delayMs: number) => {
      next = undefined;
      failures.failed(LOG, error);
      this.log(
        'warn',
        `${options.group}: consuming failed (${messageOf(error)}); retrying in ${Math.round(delayMs)} ms`,
      );
    };
    while (!stopped.aborted) {
      const records = await retry(step, { signal: stopped, onFailure: failed });
      const last = records?.[records.length - 1];
      if (last) next = last.offset + 1;
      // A read now and then finds appends a silently dropped LISTEN connection did not hear.
      else await appended.wait(SAFETY_READ_MS, stopped);
    }
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
