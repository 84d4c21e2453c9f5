import { LOG_EVENT_VERSION, LogEvent, LogEventType } from '@castlog/domain';
import { randomUUID } from 'node:crypto';

/** What the API (or the saga) appends: one event, keyed by user id so one user's events are
 * totally ordered in one partition. */
export interface EventEnvelope {
  readonly key: string;
  readonly type: LogEventType;
  readonly version: number;
  readonly eventId: string;
  readonly requestId: string;
  readonly value: LogEvent;
}

/** The envelope of `event` for the request `requestId`: keyed by its user, in the current schema
 * version, with a fresh event id. */
export const envelopeOf = (event: LogEvent, requestId: string): EventEnvelope => ({
  key: event.userId,
  type: event.type,
  version: LOG_EVENT_VERSION,
  eventId: randomUUID(),
  requestId,
  value: event,
});

export interface LogPosition {
  readonly partition: number;
  readonly offset: number;
}

/** An envelope read back, with its position and the log's append time (epoch ms). */
export interface LogRecord extends EventEnvelope, LogPosition {
  readonly timestamp: number;
}

/** Records of one partition, in offset order. */
export interface LogBatch {
  readonly partition: number;
  readonly records: readonly LogRecord[];
}

export interface ConsumeOptions {
  /** Names the consumer group (Kafka) or the reader (table log). */
  readonly group: string;
  /** Where to start an assigned partition: the next offset the caller has not applied. */
  readonly startFrom: (partition: number) => Promise<number>;
  /** Applies one batch; the partition's next batch is handed over only once this resolves (a
   * consumer far behind may fetch it meanwhile, and hand over other partitions' batches). A
   * rejection is reported to `onError` and the consumer retries with capped backoff — the same
   * records again, or from `startFrom` — until the handler succeeds or the consumer is stopped:
   * nothing is skipped, and a handler that applies each record exactly once (by its stored
   * position) sees every record applied once, in order. */
  readonly handle: (batch: LogBatch) => Promise<void>;
  readonly maxBatchSize?: number;
  /** Every failure the consumer recovers from: of the handler, of `startFrom`, of the log itself. */
  readonly onError?: (error: unknown) => void;
  /** Called once the consumer is past every failure it reported: the log answers again, the stored
   * positions of its partitions are read and a failed batch has been handled — whether or not any
   * record arrives meanwhile. */
  readonly onRecovered?: () => void;
}

/** A consumer keeps running through failures of its handler and of the log's connections until
 * stopped. */
export interface RunningConsumer {
  /** Stops once the batches in hand have been handled (a batch not yet begun is not). */
  stop(): Promise<void>;
}

/** The event log port. Two adapters: Kafka (scaled mode) and a PostgreSQL table (embedded). */
export interface EventLog {
  readonly partitions: number;
  /** Appends all envelopes durably; answers each one's position, in input order. */
  append(envelopes: readonly EventEnvelope[]): Promise<LogPosition[]>;
  consume(options: ConsumeOptions): Promise<RunningConsumer>;
  /** The next offset to be written in each partition, i.e. the log's end right now. */
  endOffsets(): Promise<Map<number, number>>;
  /** Reads every record from `from` (default 0 in every partition) up to the end offsets taken
   * when the call starts, batch by batch, in offset order within each partition. */
  readToEnd(handle: (batch: LogBatch) => Promise<void>, from?: Map<number, number>): Promise<void>;
  close(): Promise<void>;
}

/** A positive number unique across the log that depends only on a record's position. */
export const sequenceOf = (position: LogPosition, partitions: number): number =>
  position.offset * partitions + position.partition + 1;
