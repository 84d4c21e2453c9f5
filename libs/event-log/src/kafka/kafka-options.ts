import { DependencyHealth, LogFn } from '@castlog/supervision';

export interface KafkaEventLogOptions {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly clientId: string;
  /** How long the group waits for a silent member before giving its partitions to the others. */
  readonly sessionTimeoutMs?: number;
  /** The name under which `health` knows the log. */
  readonly component?: string;
  readonly health?: DependencyHealth;
  readonly log?: LogFn;
}

/** Between two heartbeats of a consumer that waits (for its stored offsets, or to retry a batch). */
export const HEARTBEAT_MS = 3_000;

/** The largest event a request produces is about 4.65 MiB (a gpodder.net upload of 4 MiB); the topic
 * allows well above that, and a fetch takes such a record batch whole even where it is larger than
 * FETCH_BYTES_PER_PARTITION (docs/operations.md, "Message sizes"). */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
export const MAX_BATCH_BYTES = 4 * 1024 * 1024;
export const MAX_BATCH_MESSAGES = 5000;

/** What a fetch asks of each partition: about one projector batch of the usual events, so that a
 * fetch of a log far ahead brings the next batch of several partitions and the projector runs their
 * transactions at once (Kafka fills a fetch partition by partition). A larger record batch still
 * comes whole when its partition is the first of a fetch with data (KIP-74). The measurements
 * behind the size are in docs/performance.md. */
export const FETCH_BYTES_PER_PARTITION = 4 * 1024 * 1024;

/** Batches a consumer holds fetched but not yet handled, beyond which it waits for its batches
 * before fetching again: two fetches of a log far ahead. */
export const FETCHED_AHEAD = 8;

/** How often the client retries a request the cluster failed, with backoff, before giving up. */
export const RETRIES = 5;
