import { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import { LogBatch } from '../event-log.port';
import { FETCH_BYTES_PER_PARTITION, MAX_MESSAGE_BYTES } from './kafka-options';
import { toRecord } from './records';

/** One read of the log up to the end offsets it started with. */
interface Reading {
  readonly end: ReadonlyMap<number, number>;
  /** Partitions with records left to read. */
  readonly remaining: Set<number>;
  readonly handle: (batch: LogBatch) => Promise<void>;
  failure?: unknown;
  /** Ends the read: every partition read, or a batch failed. */
  readonly done: () => void;
}

/** Reads `topic` from `from` (the start when not given) up to `end`, through a consumer of a group
 * of its own; a batch the handler fails ends the read with that failure. */
export async function readToEnd(
  kafka: Kafka,
  topic: string,
  partitions: number,
  end: ReadonlyMap<number, number>,
  handle: (batch: LogBatch) => Promise<void>,
  from?: ReadonlyMap<number, number>,
): Promise<void> {
  const remaining = new Set([...end].filter(([p, high]) => high > (from?.get(p) ?? 0)).map(([p]) => p));
  if (remaining.size === 0) return;
  const consumer = kafka.consumer({
    groupId: `castlog-reader-${randomUUID()}`,
    maxBytesPerPartition: FETCH_BYTES_PER_PARTITION,
    maxBytes: 4 * MAX_MESSAGE_BYTES,
  });
  let failure: unknown;
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    consumer.on(consumer.events.GROUP_JOIN, () => {
      for (const [partition] of end)
        consumer.seek({ topic, partition, offset: String(from?.get(partition) ?? 0) });
    });
    failure = await readUntilDone(consumer, partitions, { end, remaining, handle });
  } finally {
    await consumer.disconnect();
  }
  if (failure) throw failure;
}

/** Runs the consumer until every partition is read or a batch fails; answers that failure. */
const readUntilDone = (
  consumer: Consumer,
  partitions: number,
  reading: Omit<Reading, 'done' | 'failure'>,
): Promise<unknown> =>
  new Promise((resolve) => {
    const state: Reading = { ...reading, done: () => resolve(state.failure) };
    void consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      // Every partition at once, so a caller can apply what arrives together in one transaction.
      partitionsConsumedConcurrently: partitions,
      eachBatch: (payload) => readBatch(state, payload),
    });
  });

async function readBatch(
  reading: Reading,
  { batch, resolveOffset, heartbeat }: EachBatchPayload,
): Promise<void> {
  const { partition } = batch;
  if (reading.failure || !reading.remaining.has(partition)) return;
  const high = reading.end.get(partition) ?? 0;
  const messages = batch.messages.filter((m) => Number(m.offset) < high);
  const last = messages[messages.length - 1];
  try {
    if (last) {
      await reading.handle({ partition, records: messages.map((m) => toRecord(partition, m)) });
      resolveOffset(last.offset);
    }
  } catch (error) {
    reading.failure = error;
    reading.done();
    return;
  }
  await heartbeat();
  if (last && Number(last.offset) >= high - 1) reading.remaining.delete(partition);
  if (reading.remaining.size === 0) reading.done();
}
