import {
  Admin,
  Consumer,
  IHeaders,
  Kafka,
  KafkaJSError,
  KafkaMessage,
  logLevel,
  Partitioners,
  Producer,
} from 'kafkajs';
import {
  Backoff,
  DependencyHealth,
  ignoreLog,
  isUnavailableError,
  LogFn,
  messageOf,
  pause,
  RecoveryProbe,
  recoveryProbe,
  retry,
} from '@castlog/supervision';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { decodeRecord, EncodedEnvelope, encodeEnvelope, EventHeaders } from '../codec/envelope.codec';
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
import { kafkaLogLevel } from './kafka-log-level';

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
const HEARTBEAT_MS = 3_000;

/** The largest event a request produces is about 4.65 MiB (a gpodder.net upload of 4 MiB); the topic
 * allows well above that, and a fetch takes such a record batch whole even where it is larger than
 * FETCH_BYTES_PER_PARTITION (docs/operations.md, "Message sizes"). */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
const MAX_BATCH_BYTES = 4 * 1024 * 1024;
const MAX_BATCH_MESSAGES = 5000;

/** What a fetch asks of each partition: about a projector's batch of the usual events (8,000 of a
 * few hundred bytes), so that a fetch of a log far ahead (16 MiB in all) brings the next batch of 4
 * partitions and the projector's transactions run 4 at a time. Kafka fills a fetch partition by
 * partition: asking 8 MiB of each, two partitions filled it, and a catch-up ran one or two
 * transactions at once. A record batch larger than this still comes whole when its partition is the
 * first of a fetch that has data (Kafka's rule, KIP-74); kafkajs shuffles a fetch's partitions, so a
 * waiting partition is first with a chance of one in the partitions with data, each fetch. */
const FETCH_BYTES_PER_PARTITION = 4 * 1024 * 1024;

/** Batches a consumer holds fetched but not yet handled, beyond which it waits for its batches
 * before fetching again: two fetches of a log far ahead (16 MiB, the next batch of 4 partitions). */
const FETCHED_AHEAD = 8;

/** The batches a consumer has fetched and handed over, not yet handled: each partition's run one
 * after another, in the order fetched. */
class HandingOver {
  private readonly last = new Map<number, Promise<void>>();
  private readonly pending = new Set<Promise<void>>();

  /** Batches not yet handled. */
  get size(): number {
    return this.pending.size;
  }

  /** Runs `handle` once the partition's batches before it are handled: answers that wait
   * (`previous`, none when there is nothing before it) and the batch's own (`handled`). `handle`
   * must not reject. */
  add(partition: number, handle: () => Promise<void>): { previous?: Promise<void>; handled: Promise<void> } {
    const previous = this.last.get(partition);
    const handled = previous ? previous.then(handle) : handle();
    this.last.set(partition, handled);
    this.pending.add(handled);
    const forget = () => {
      this.pending.delete(handled);
      if (this.last.get(partition) === handled) this.last.delete(partition);
    };
    handled.then(forget, forget);
    return { previous, handled };
  }

  settled(): Promise<unknown> {
    return Promise.allSettled(this.pending);
  }
}

/** How often the client retries a request the cluster failed, with backoff, before giving up. */
const RETRIES = 5;

/** kafkajs warns of it at every start of an idempotent producer whose retries are limited. They are
 * limited on purpose, so that an append fails and the request is answered 503 rather than kept
 * waiting: said as what it means here, at info. */
const LIMITED_RETRIES_WARNING = 'Limiting retries for the idempotent producer may invalidate EoS guarantees';
const LIMITED_RETRIES_NOTE =
  `kafka: appends are retried ${RETRIES} times; one that still fails is answered 503 and may be in the log ` +
  '(it then applies once; see "The Kafka broker restarted" in docs/operations.md)';

/** The key → partition mapping Kafka's Java clients use (murmur2), fixed here so the adapter can
 * give each caller its own offset from the batch's base offset. */
const partitionerFor = (partitions: number) => {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    partitionErrorCode: 0,
  }));
  return (key: string) => partitioner({ topic: '', partitionMetadata, message: { key, value: null } });
};

/** Causes of a consumer's failures (see ConsumerFailures): the log itself, reading a partition's
 * stored position, handling a partition's batch. */
const LOG = 'log';
const startOf = (partition: number) => `start ${partition}`;
const batchOf = (partition: number) => `batch ${partition}`;

/** Waits for `work`, heartbeating meanwhile so the group keeps this member. The wait for the next
 * heartbeat ends with the work: a timer left running would hold a stopping process for seconds. */
export async function heartbeatWhile(
  work: Promise<unknown> | undefined,
  heartbeat: () => Promise<void>,
  intervalMs = HEARTBEAT_MS,
): Promise<void> {
  if (!work) return;
  let done = false;
  const settled = work.finally(() => (done = true));
  while (!done) {
    // A plain timer, cleared when the work ends first: an aborted sleep would build an AbortError,
    // stack trace and all, for every batch.
    let timer: NodeJS.Timeout | undefined;
    const beat = new Promise<void>((resolve) => (timer = setTimeout(resolve, intervalMs)));
    try {
      await Promise.race([settled, beat]);
    } finally {
      clearTimeout(timer);
    }
    if (!done) await heartbeat();
  }
}

const header = (headers: IHeaders | undefined, name: string): string => {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? '' : first.toString();
};

export class KafkaEventLog implements EventLog {
  readonly partitions: number;
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly admin: Admin;
  private readonly partitionOf: (key: string) => number;
  private readonly stops = new Set<() => Promise<void>>();
  private readonly appends: GroupCommit<EncodedEnvelope, LogPosition>;
  private readonly component: string;
  private readonly log: LogFn;
  /** After a loss, probes the topic's offsets until the cluster answers, appends or not. */
  private readonly recovery?: RecoveryProbe;

  private constructor(private readonly options: KafkaEventLogOptions) {
    this.partitions = options.partitions;
    this.component = options.component ?? 'event-log';
    this.log = options.log ?? ignoreLog;
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: [...options.brokers],
      logLevel: logLevel.WARN,
      logCreator:
        () =>
        ({ level, log }) => {
          const { message, ...extra } = log;
          if (message === LIMITED_RETRIES_WARNING) this.log('info', LIMITED_RETRIES_NOTE);
          else if (level <= logLevel.WARN)
            this.log(kafkaLogLevel(level, message, extra), `kafka: ${message}`, extra);
        },
      retry: { retries: RETRIES, initialRetryTime: 200, maxRetryTime: 5000 },
    });
    this.producer = this.kafka.producer({
      // Every message names its partition (`partitionOf`), so the producer's partitioner is never
      // asked; naming it keeps kafkajs from warning at every start that its default changed in 2.0.
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
    });
    this.admin = this.kafka.admin();
    this.recovery =
      options.health &&
      recoveryProbe(
        this.component,
        options.health,
        () => this.admin.fetchTopicOffsets(options.topic),
        this.log,
      );
    this.partitionOf = partitionerFor(options.partitions);
    this.appends = new GroupCommit((envelopes) => this.send(envelopes), {
      maxItems: MAX_BATCH_MESSAGES,
      maxBytes: MAX_BATCH_BYTES,
      sizeOf: (encoded) => encoded.bytes,
    });
  }

  /** Connects, and creates the topic when it does not exist (never by broker auto-creation). */
  static async open(options: KafkaEventLogOptions): Promise<KafkaEventLog> {
    const log = new KafkaEventLog(options);
    await log.admin.connect();
    await log.ensureTopic();
    await log.producer.connect();
    return log;
  }

  private async ensureTopic(): Promise<void> {
    const { topic, partitions, replicationFactor } = this.options;
    const existing = await this.admin.fetchTopicMetadata({ topics: [] });
    const found = existing.topics.find((t) => t.name === topic);
    if (found) {
      if (found.partitions.length !== partitions) {
        throw new Error(
          `topic ${topic} has ${found.partitions.length} partitions but KAFKA_PARTITIONS is ${partitions}: keys would move`,
        );
      }
      return;
    }
    await this.admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic,
          numPartitions: partitions,
          replicationFactor,
          configEntries: [
            { name: 'retention.ms', value: '-1' },
            { name: 'retention.bytes', value: '-1' },
            { name: 'message.timestamp.type', value: 'LogAppendTime' },
            { name: 'max.message.bytes', value: String(MAX_MESSAGE_BYTES) },
            { name: 'min.insync.replicas', value: String(Math.min(2, replicationFactor)) },
          ],
        },
      ],
    });
  }

  /** Checks every envelope against its schema first: a malformed event never reaches the topic. */
  async append(envelopes: readonly EventEnvelope[]): Promise<LogPosition[]> {
    return this.appends.submit(envelopes.map(encodeEnvelope));
  }

  private async send(encoded: EncodedEnvelope[]): Promise<LogPosition[]> {
    const partitions = encoded.map(({ envelope }) => this.partitionOf(envelope.key));
    const indexInPartition = new Map<number, number>();
    const indexes = partitions.map((partition) => {
      const index = indexInPartition.get(partition) ?? 0;
      indexInPartition.set(partition, index + 1);
      return index;
    });
    const metadata = await this.reporting(() =>
      this.producer.send({
        topic: this.options.topic,
        acks: -1,
        messages: encoded.map(({ envelope, value }, i) => ({
          key: envelope.key,
          partition: partitions[i],
          value,
          headers: {
            type: envelope.type,
            version: String(envelope.version),
            eventId: envelope.eventId,
            requestId: envelope.requestId,
          },
        })),
      }),
    );
    const baseOffsets = new Map(metadata.map((m) => [m.partition, Number(m.baseOffset)]));
    return encoded.map((_, i) => {
      const partition = partitions[i] as number;
      const base = baseOffsets.get(partition);
      if (base === undefined) throw new Error(`kafka answered no offset for partition ${partition}`);
      return { partition, offset: base + (indexes[i] as number) };
    });
  }

  private toRecord(partition: number, message: KafkaMessage): LogRecord {
    const headers: EventHeaders = {
      type: header(message.headers, 'type'),
      version: Number(header(message.headers, 'version')),
      eventId: header(message.headers, 'eventId'),
      requestId: header(message.headers, 'requestId'),
    };
    return decodeRecord(headers, message.value?.toString() ?? 'null', {
      key: message.key?.toString() ?? '',
      partition,
      offset: Number(message.offset),
      timestamp: Number(message.timestamp),
    });
  }

  /** Tells `health` whether the cluster answers, by the outcome of `work`. */
  private async reporting<T>(work: () => Promise<T>): Promise<T> {
    try {
      const result = await work();
      this.options.health?.restored(this.component);
      return result;
    } catch (error) {
      if (isUnavailableError(error)) this.recovery?.lost(error);
      throw error;
    }
  }

  /** A consumer in the group, kept running: kafkajs restarts it after retriable failures; one it
   * will not restart (a crash on a non-retriable error) is replaced with capped backoff. A failed
   * batch is retried in place, heartbeating, until it succeeds (see ConsumeOptions.handle). */
  async consume(options: ConsumeOptions): Promise<RunningConsumer> {
    const stopped = new AbortController();
    const failures = new ConsumerFailures(options);
    let current: Consumer | undefined;
    let replacing: Promise<unknown> | undefined;
    // Shared by a consumer and its replacements: a partition's batches are handled one after
    // another, in offset order, whichever consumer fetched them.
    const handing = new HandingOver();
    const start = async () => {
      current = await this.startConsumer(options, failures, stopped.signal, replace, handing);
    };
    const replace = () => {
      if (stopped.signal.aborted || replacing) return;
      this.log('warn', `${options.group}: consumer stopped for good; starting a new one`);
      replacing = (async () => {
        await current?.disconnect().catch(() => undefined);
        await retry(start, { signal: stopped.signal, onFailure: (error) => failures.failed(LOG, error) });
      })().finally(() => (replacing = undefined));
    };
    await start();
    const stop = async () => {
      stopped.abort();
      await replacing;
      await current?.disconnect();
      await handing.settled();
      this.stops.delete(stop);
    };
    this.stops.add(stop);
    return { stop };
  }

  /** Hands a fetched batch of `partition` to the handler, in slices of at most `maxBatchSize`
   * records, each retried with capped backoff until it succeeds, while the batch is current (its
   * consumer running, no seek pending for its partition, not stopped). Never rejects: it may run
   * after its `eachBatch` has returned. */
  private async handOver(
    options: ConsumeOptions,
    failures: ConsumerFailures,
    stopped: AbortSignal,
    partition: number,
    messages: readonly KafkaMessage[],
    current: () => boolean,
    heartbeat: () => Promise<void>,
  ): Promise<void> {
    const beat = () => heartbeat().catch(() => undefined);
    const max = options.maxBatchSize ?? Number.MAX_SAFE_INTEGER;
    for (let start = 0; start < messages.length; start += max) {
      if (!current()) return;
      const slice = messages.slice(start, start + max);
      for (const backoff = new Backoff(); ;) {
        try {
          await options.handle({
            partition,
            records: slice.map((message) => this.toRecord(partition, message)),
          });
          failures.cleared(batchOf(partition));
          break;
        } catch (error) {
          failures.failed(batchOf(partition), error);
          const delayMs = backoff.next();
          this.log(
            'warn',
            `${options.group}, partition ${partition}: batch failed (${messageOf(error)}); ` +
              `retrying in ${Math.round(delayMs)} ms`,
          );
          await heartbeatWhile(pause(delayMs, stopped), beat);
          if (!current()) return;
        }
      }
      await beat();
    }
  }

  private async startConsumer(
    options: ConsumeOptions,
    failures: ConsumerFailures,
    stopped: AbortSignal,
    dead: () => void,
    handing: HandingOver,
  ): Promise<Consumer> {
    const sessionTimeout = this.options.sessionTimeoutMs ?? 30_000;
    const consumer = this.kafka.consumer({
      groupId: options.group,
      maxBytesPerPartition: FETCH_BYTES_PER_PARTITION,
      maxBytes: 2 * MAX_MESSAGE_BYTES,
      sessionTimeout,
      heartbeatInterval: HEARTBEAT_MS,
      allowAutoTopicCreation: false,
    });
    const { topic } = this.options;
    // Kafka's committed offsets are only a hint: on every assignment, seek to the caller's, and
    // hand over nothing of a partition before that seek is in place (batches fetched before it are
    // stale). The caller's store may be out of reach for a while: ask until it answers.
    // Joining the group is this consumer working again; what is left is the new assignment's seeks.
    const seeks = new Map<number, Promise<void>>();
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      const assigned = payload.memberAssignment[topic] ?? [];
      failures.restarted(assigned.map(startOf));
      for (const partition of assigned) {
        const seek = retry(() => options.startFrom(partition), {
          signal: stopped,
          onFailure: (error) => failures.failed(startOf(partition), error),
        })
          .then((offset) => {
            if (offset === undefined) return;
            consumer.seek({ topic, partition, offset: String(offset) });
            failures.cleared(startOf(partition));
          })
          .catch((error: unknown) => failures.failed(startOf(partition), error));
        seeks.set(partition, seek);
        // Once in place, the seek holds no batch back: they skip the wait.
        void seek.then(() => {
          if (seeks.get(partition) === seek) seeks.delete(partition);
        });
      }
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      failures.failed(LOG, payload.error);
      if (!payload.restart) dead();
    });
    // Once the broker answers again the consumer still has to rejoin its group, which Kafka may hold
    // until the group's previous member times out: that, not the last connection error, is why it
    // is not consuming meanwhile.
    const rejoining = new Error(
      `kafka answers again; rejoining consumer group ${options.group} (the join may wait up to ` +
        `${Math.round(sessionTimeout / 1000)} s for the group's previous member to time out)`,
    );
    consumer.on(consumer.events.REQUEST, () => failures.answering(LOG, rejoining));
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        // The caller's stored offsets are the truth (every assignment seeks to them); the group's
        // committed offsets only show progress to Kafka's tools. kafkajs's auto-commit would commit
        // after every batch of every partition, a broker write each; every 5 s is plenty.
        autoCommit: false,
        autoCommitInterval: 5_000,
        eachBatchAutoResolve: false,
        // Every partition at once: the projector applies what arrives together in one transaction.
        partitionsConsumedConcurrently: this.partitions,
        eachBatch: async ({
          batch,
          resolveOffset,
          heartbeat,
          isRunning,
          isStale,
          commitOffsetsIfNecessary,
        }) => {
          const current = () => isRunning() && !isStale() && !stopped.aborted;
          await heartbeatWhile(seeks.get(batch.partition), heartbeat);
          const { partition } = batch;
          const { previous, handled } = handing.add(partition, () =>
            this.handOver(options, failures, stopped, partition, batch.messages, current, heartbeat),
          );
          // A partition with more records behind this batch is far behind: its next batch is
          // fetched while this one is handled (kafkajs fetches again only once every batch of a
          // fetch is done), within FETCHED_AHEAD batches in all. A partition at its end waits for
          // its batch, so that what arrives meanwhile comes together in the next one.
          const ahead = batch.offsetLag() !== '0' && handing.size <= FETCHED_AHEAD;
          await heartbeatWhile(ahead ? previous : handled, heartbeat);
          // A batch no longer current (a seek pending for its partition, the consumer stopping)
          // leaves the fetch position where it was: the seek, or the next start, decides it.
          const last = batch.messages[batch.messages.length - 1];
          if (last && current()) resolveOffset(last.offset);
          await commitOffsetsIfNecessary();
        },
      });
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
    return consumer;
  }

  /** kafkajs's admin gives up at once on a retriable answer such as NOT_LEADER_FOR_PARTITION, which a
   * broker gives for a moment after creating a topic: retry those a few times, with backoff. */
  async endOffsets(): Promise<Map<number, number>> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        // Through `reporting`: readiness checks ask for these, so a log that answers again is seen
        // as back even while nothing is appended.
        const offsets = await this.reporting(() => this.admin.fetchTopicOffsets(this.options.topic));
        return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
      } catch (error) {
        if (!(error instanceof KafkaJSError && error.retriable) || attempt >= 6) throw error;
        await delay(100 * 2 ** attempt);
      }
    }
  }

  async readToEnd(handle: (batch: LogBatch) => Promise<void>, from?: Map<number, number>): Promise<void> {
    const end = await this.endOffsets();
    const remaining = new Set([...end].filter(([p, high]) => high > (from?.get(p) ?? 0)).map(([p]) => p));
    if (remaining.size === 0) return;
    const consumer = this.kafka.consumer({
      groupId: `castlog-reader-${randomUUID()}`,
      maxBytesPerPartition: FETCH_BYTES_PER_PARTITION,
      maxBytes: 4 * MAX_MESSAGE_BYTES,
    });
    const { topic } = this.options;
    let failure: unknown;
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await new Promise<void>((resolve) => {
        consumer.on(consumer.events.GROUP_JOIN, () => {
          for (const [partition] of end)
            consumer.seek({ topic, partition, offset: String(from?.get(partition) ?? 0) });
        });
        void consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          // Every partition at once, so a caller can apply what arrives together in one transaction.
          partitionsConsumedConcurrently: this.partitions,
          eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
            if (failure || !remaining.has(batch.partition)) return;
            const high = end.get(batch.partition) ?? 0;
            const messages = batch.messages.filter((m) => Number(m.offset) < high);
            try {
              if (messages.length > 0) {
                await handle({
                  partition: batch.partition,
                  records: messages.map((m) => this.toRecord(batch.partition, m)),
                });
                resolveOffset(messages[messages.length - 1]!.offset);
              }
            } catch (error) {
              failure = error;
              resolve();
              return;
            }
            await heartbeat();
            const last = messages[messages.length - 1];
            if (last && Number(last.offset) >= high - 1) remaining.delete(batch.partition);
            if (remaining.size === 0) resolve();
          },
        });
      });
    } finally {
      await consumer.disconnect();
    }
    if (failure) throw failure;
  }

  async close(): Promise<void> {
    this.recovery?.close();
    await Promise.all([...this.stops].map((stop) => stop()));
    await this.producer.disconnect();
    await this.admin.disconnect();
  }
}
