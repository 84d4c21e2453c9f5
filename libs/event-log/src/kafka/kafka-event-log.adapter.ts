import { Admin, Kafka } from 'kafkajs';
import { ignoreLog, LogFn, RecoveryProbe, recoveryProbe } from '@castlog/supervision';
import {
  ConsumeOptions,
  EventEnvelope,
  EventLog,
  LogBatch,
  LogPosition,
  RunningConsumer,
} from '../event-log.port';
import { consumeInGroup } from './group-consumer';
import { kafkaClient } from './kafka-client';
import { KafkaEventLogOptions } from './kafka-options';
import { KafkaAppender } from './producer';
import { readToEnd } from './reader';
import { Reporting, reportingTo } from './reporting';
import { ensureTopic, topicEndOffsets } from './topic';

export type { KafkaEventLogOptions } from './kafka-options';
export { MAX_MESSAGE_BYTES } from './kafka-options';

/** The event log on a Kafka topic: the producer (producer.ts), the topic's administration
 * (topic.ts), the group consumers (group-consumer.ts, handing-over.ts) and one-off reads
 * (reader.ts), each reporting to `health` whether the cluster answers. */
export class KafkaEventLog implements EventLog {
  readonly partitions: number;
  private readonly kafka: Kafka;
  private readonly admin: Admin;
  private readonly appender: KafkaAppender;
  private readonly reporting: Reporting;
  private readonly stops = new Set<() => Promise<void>>();
  private readonly log: LogFn;
  /** After a loss, probes the topic's offsets until the cluster answers, appends or not. */
  private readonly recovery?: RecoveryProbe;

  private constructor(private readonly options: KafkaEventLogOptions) {
    this.partitions = options.partitions;
    const component = options.component ?? 'event-log';
    this.log = options.log ?? ignoreLog;
    this.kafka = kafkaClient(options, this.log);
    this.admin = this.kafka.admin();
    this.recovery =
      options.health &&
      recoveryProbe(component, options.health, () => this.admin.fetchTopicOffsets(options.topic), this.log);
    this.reporting = reportingTo(component, options.health, this.recovery);
    this.appender = new KafkaAppender(this.kafka, options.topic, options.partitions, this.reporting);
  }

  /** Connects, and creates the topic when it does not exist (never by broker auto-creation). */
  static async open(options: KafkaEventLogOptions): Promise<KafkaEventLog> {
    const log = new KafkaEventLog(options);
    await log.admin.connect();
    await ensureTopic(log.admin, options);
    await log.appender.connect();
    return log;
  }

  /** Checks every envelope against its schema first: a malformed event never reaches the topic. */
  async append(envelopes: readonly EventEnvelope[]): Promise<LogPosition[]> {
    return this.appender.append(envelopes);
  }

  async consume(options: ConsumeOptions): Promise<RunningConsumer> {
    const { topic, partitions, sessionTimeoutMs = 30_000 } = this.options;
    const running = await consumeInGroup(
      { kafka: this.kafka, topic, partitions, sessionTimeoutMs, log: this.log },
      options,
    );
    const stop = async () => {
      await running.stop();
      this.stops.delete(stop);
    };
    this.stops.add(stop);
    return { stop };
  }

  endOffsets(): Promise<Map<number, number>> {
    return topicEndOffsets(this.admin, this.options.topic, this.reporting);
  }

  async readToEnd(handle: (batch: LogBatch) => Promise<void>, from?: Map<number, number>): Promise<void> {
    const end = await this.endOffsets();
    await readToEnd(this.kafka, this.options.topic, this.partitions, end, handle, from);
  }

  async close(): Promise<void> {
    this.recovery?.close();
    await Promise.all([...this.stops].map((stop) => stop()));
    await this.appender.disconnect();
    await this.admin.disconnect();
  }
}
