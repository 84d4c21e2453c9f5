import { Admin, KafkaJSError } from 'kafkajs';
import { retry } from '@castlog/supervision';
import { KafkaEventLogOptions, MAX_MESSAGE_BYTES } from './kafka-options';
import { Reporting } from './reporting';

/** Creates the topic when it does not exist (never by broker auto-creation); an existing one with
 * another partition count stops the start, since keys would move. */
export async function ensureTopic(admin: Admin, options: KafkaEventLogOptions): Promise<void> {
  const { topic, partitions, replicationFactor } = options;
  const existing = await admin.fetchTopicMetadata({ topics: [] });
  const found = existing.topics.find((t) => t.name === topic);
  if (found) {
    if (found.partitions.length !== partitions) {
      throw new Error(
        `topic ${topic} has ${found.partitions.length} partitions but KAFKA_PARTITIONS is ${partitions}: keys would move`,
      );
    }
    return;
  }
  await admin.createTopics({
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

/** Each partition's next offset. kafkajs's admin gives up at once on a retriable answer such as
 * NOT_LEADER_FOR_PARTITION, which a broker gives for a moment after creating a topic: those are
 * retried a few times, with backoff. Through `reporting`: readiness checks ask for these, so a log
 * that answers again is seen as back even while nothing is appended. */
export async function topicEndOffsets(
  admin: Admin,
  topic: string,
  reporting: Reporting,
): Promise<Map<number, number>> {
  const offsets = await retry(() => reporting(() => admin.fetchTopicOffsets(topic)), {
    initialMs: 200,
    maxMs: 3_200,
    attempts: 8,
    retryable: (error) => error instanceof KafkaJSError && error.retriable,
  });
  return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
}
