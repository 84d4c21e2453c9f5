import { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { LogFn, retry } from '@castlog/supervision';
import { ConsumerFailures } from '../consumer-failures';
import { ConsumeOptions, RunningConsumer } from '../event-log.port';
import { BatchHandling, HandingOver, handOver } from './handing-over';
import { heartbeatWhile } from './heartbeat-while';
import { FETCH_BYTES_PER_PARTITION, FETCHED_AHEAD, HEARTBEAT_MS, MAX_MESSAGE_BYTES } from './kafka-options';

/** Causes of a consumer's failures (see ConsumerFailures): the log itself, reading a partition's
 * stored position (a partition's batch: `batchOf`). */
const LOG = 'log';
const startOf = (partition: number) => `start ${partition}`;

/** The cluster and topic a group consumer reads. */
export interface GroupConsumerContext {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly partitions: number;
  readonly sessionTimeoutMs: number;
  readonly log: LogFn;
}

/** What one `consume` shares among its consumers, a consumer and its replacements: a partition's
 * batches are handled one after another, in offset order, whichever consumer fetched them. */
interface Group extends GroupConsumerContext, BatchHandling {
  readonly handing: HandingOver;
}

/** A consumer in the group, kept running: kafkajs restarts it after retriable failures; one it
 * will not restart (a crash on a non-retriable error) is replaced with capped backoff. A failed
 * batch is retried in place, heartbeating, until it succeeds (see ConsumeOptions.handle). */
export async function consumeInGroup(
  context: GroupConsumerContext,
  options: ConsumeOptions,
): Promise<RunningConsumer> {
  const stopped = new AbortController();
  const group: Group = {
    ...context,
    options,
    failures: new ConsumerFailures(options),
    stopped: stopped.signal,
    handing: new HandingOver(),
  };
  let current: Consumer | undefined;
  let replacing: Promise<unknown> | undefined;
  const start = async () => {
    current = await startConsumer(group, replace);
  };
  const replace = () => {
    if (stopped.signal.aborted || replacing) return;
    context.log('warn', `${options.group}: consumer stopped for good; starting a new one`);
    replacing = (async () => {
      await current?.disconnect().catch(() => undefined);
      await retry(start, { signal: stopped.signal, onFailure: (error) => group.failures.failed(LOG, error) });
    })().finally(() => (replacing = undefined));
  };
  await start();
  const stop = async () => {
    stopped.abort();
    await replacing;
    await current?.disconnect();
    await group.handing.settled();
  };
  return { stop };
}

/** Connects a consumer of the group and runs it; `dead` is called when kafkajs will not restart it. */
async function startConsumer(group: Group, dead: () => void): Promise<Consumer> {
  const { options, failures, topic } = group;
  const consumer = group.kafka.consumer({
    groupId: options.group,
    maxBytesPerPartition: FETCH_BYTES_PER_PARTITION,
    maxBytes: 2 * MAX_MESSAGE_BYTES,
    sessionTimeout: group.sessionTimeoutMs,
    heartbeatInterval: HEARTBEAT_MS,
    allowAutoTopicCreation: false,
  });
  const seeks = seekOnAssignment(consumer, group);
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    failures.failed(LOG, payload.error);
    if (!payload.restart) dead();
  });
  reportRejoining(consumer, group);
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
      partitionsConsumedConcurrently: group.partitions,
      eachBatch: (payload) => handleBatch(group, seeks, payload),
    });
  } catch (error) {
    await consumer.disconnect().catch(() => undefined);
    throw error;
  }
  return consumer;
}

/** Kafka's committed offsets are only a hint: on every assignment, seek to the caller's, and hand
 * over nothing of a partition before that seek is in place (batches fetched before it are stale).
 * Joining the group is this consumer working again; what is left is the new assignment's seeks.
 * Answers the seeks not yet in place, by partition. */
function seekOnAssignment(consumer: Consumer, group: Group): Map<number, Promise<void>> {
  const seeks = new Map<number, Promise<void>>();
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const assigned = payload.memberAssignment[group.topic] ?? [];
    group.failures.restarted(assigned.map(startOf));
    for (const partition of assigned) {
      const seek = seekToStored(consumer, group, partition);
      seeks.set(partition, seek);
      // Once in place, the seek holds no batch back: they skip the wait.
      void seek.then(() => {
        if (seeks.get(partition) === seek) seeks.delete(partition);
      });
    }
  });
  return seeks;
}

/** Seeks `partition` to the caller's stored position. The caller's store may be out of reach for a
 * while: ask until it answers. Never rejects. */
const seekToStored = (consumer: Consumer, group: Group, partition: number): Promise<void> =>
  retry(() => group.options.startFrom(partition), {
    signal: group.stopped,
    onFailure: (error) => group.failures.failed(startOf(partition), error),
  })
    .then((offset) => {
      if (offset === undefined) return;
      consumer.seek({ topic: group.topic, partition, offset: String(offset) });
      group.failures.cleared(startOf(partition));
    })
    .catch((error: unknown) => group.failures.failed(startOf(partition), error));

/** Once the broker answers again the consumer still has to rejoin its group, which Kafka may hold
 * until the group's previous member times out: that, not the last connection error, is why it is
 * not consuming meanwhile. */
function reportRejoining(consumer: Consumer, group: Group): void {
  const rejoining = new Error(
    `kafka answers again; rejoining consumer group ${group.options.group} (the join may wait up to ` +
      `${Math.round(group.sessionTimeoutMs / 1000)} s for the group's previous member to time out)`,
  );
  consumer.on(consumer.events.REQUEST, () => group.failures.answering(LOG, rejoining));
}

/** Hands a fetched batch over once its partition's seek is in place, and moves the fetch position
 * past it. */
async function handleBatch(
  group: Group,
  seeks: ReadonlyMap<number, Promise<void>>,
  payload: EachBatchPayload,
): Promise<void> {
  const { batch, resolveOffset, heartbeat, isRunning, isStale, commitOffsetsIfNecessary } = payload;
  const { partition, messages } = batch;
  const current = () => isRunning() && !isStale() && !group.stopped.aborted;
  await heartbeatWhile(seeks.get(partition), heartbeat);
  const { previous, handled } = group.handing.add(partition, () =>
    handOver(group, { partition, messages, current, heartbeat }),
  );
  // A partition with more records behind this batch is far behind: its next batch is fetched while
  // this one is handled (kafkajs fetches again only once every batch of a fetch is done), within
  // FETCHED_AHEAD batches in all. A partition at its end waits for its batch, so that what arrives
  // meanwhile comes together in the next one.
  const ahead = batch.offsetLag() !== '0' && group.handing.size <= FETCHED_AHEAD;
  await heartbeatWhile(ahead ? previous : handled, heartbeat);
  // A batch no longer current (a seek pending for its partition, the consumer stopping) leaves the
  // fetch position where it was: the seek, or the next start, decides it.
  const last = messages[messages.length - 1];
  if (last && current()) resolveOffset(last.offset);
  await commitOffsetsIfNecessary();
}
