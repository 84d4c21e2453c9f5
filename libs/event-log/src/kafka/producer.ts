import { Kafka, Partitioners, Producer } from 'kafkajs';
import { EncodedEnvelope, encodeEnvelope } from '../codec/envelope.codec';
import { EventEnvelope, LogPosition } from '../event-log.port';
import { GroupCommit } from '../group-commit';
import { MAX_BATCH_BYTES, MAX_BATCH_MESSAGES } from './kafka-options';
import { Reporting } from './reporting';

/** The key → partition mapping Kafka's Java clients use (murmur2), fixed here so the adapter can
 * give each caller its own offset from the batch's base offset. */
export const partitionerFor = (partitions: number) => {
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

/** Each message's index among the messages of its partition, in order. */
const indexesInPartition = (partitions: readonly number[]): number[] => {
  const counts = new Map<number, number>();
  return partitions.map((partition) => {
    const index = counts.get(partition) ?? 0;
    counts.set(partition, index + 1);
    return index;
  });
};

/** Appends through an idempotent producer with one request in flight, concurrent appends gathered
 * into one send (group commit). */
export class KafkaAppender {
  private readonly producer: Producer;
  private readonly partitionOf: (key: string) => number;
  private readonly appends: GroupCommit<EncodedEnvelope, LogPosition>;

  constructor(
    kafka: Kafka,
    private readonly topic: string,
    partitions: number,
    private readonly reporting: Reporting,
  ) {
    this.producer = kafka.producer({
      // Every message names its partition (`partitionOf`), so the producer's partitioner is never
      // asked; naming it keeps kafkajs from warning at every start that its default changed in 2.0.
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
    });
    this.partitionOf = partitionerFor(partitions);
    this.appends = new GroupCommit((envelopes) => this.send(envelopes), {
      maxItems: MAX_BATCH_MESSAGES,
      maxBytes: MAX_BATCH_BYTES,
      sizeOf: (encoded) => encoded.bytes,
    });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  /** Checks every envelope against its schema first: a malformed event never reaches the topic. */
  append(envelopes: readonly EventEnvelope[]): Promise<LogPosition[]> {
    return this.appends.submit(envelopes.map(encodeEnvelope));
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }

  /** Sends one gathered batch; each message's position is its partition's base offset in the send
   * plus its index among that partition's messages. */
  private async send(encoded: EncodedEnvelope[]): Promise<LogPosition[]> {
    const partitions = encoded.map(({ envelope }) => this.partitionOf(envelope.key));
    const indexes = indexesInPartition(partitions);
    const metadata = await this.reporting(() =>
      this.producer.send({
        topic: this.topic,
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
}
