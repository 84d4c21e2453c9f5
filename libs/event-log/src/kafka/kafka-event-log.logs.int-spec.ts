import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import { uniqueName } from '../../../../test/support/databases';
import { envelopeOf } from '../event-log.port';
import { KafkaEventLog } from './kafka-event-log.adapter';

// A file of its own: kafkajs gives some warnings once per loaded module, and jest loads modules
// afresh for each file, so the log opened here is the first of its kafkajs.
describe('KafkaEventLog logs', () => {
  it('warns of nothing at start-up and on a first append, and says once what its limited retries mean', async () => {
    const brokers = process.env.KAFKA_BROKERS;
    if (!brokers)
      throw new Error('KAFKA_BROKERS is not set: run the tests through jest (test/infra/global-setup.ts)');
    // A broker just started may answer an idempotent producer's first InitProducerId with a
    // retriable error while its transaction coordinator loads, which kafkajs logs as an error and
    // retries: wait for the coordinator with a quiet producer first, so what is checked is castlog's
    // own logging. It names its partitioner, or it would use up kafkajs's once-per-module warning.
    const warmUp = new Kafka({ brokers: brokers.split(','), logLevel: logLevel.NOTHING }).producer({
      idempotent: true,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await warmUp.connect();
    await warmUp.disconnect();
    const lines: { level: string; message: string }[] = [];
    const log = await KafkaEventLog.open({
      brokers: brokers.split(','),
      topic: uniqueName('event_log_logs'),
      partitions: 2,
      replicationFactor: 1,
      clientId: 'event-log-logs',
      log: (level, message) => lines.push({ level, message }),
    });
    try {
      await log.append([
        envelopeOf(
          { type: 'DeletionRequested', userId: 'user-1', guid: randomUUID() },
          `req-${randomUUID()}`,
        ),
      ]);
    } finally {
      await log.close();
    }
    expect(lines.filter((line) => line.level !== 'info')).toEqual([]);
    expect(lines).toEqual([{ level: 'info', message: expect.stringContaining('answered 503') }]);
  });
});
