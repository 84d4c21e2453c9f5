import { uniqueName } from '../../../../test/support/databases';
import { EventLog } from '../event-log.port';
import { EventLogUnderTest, eventLogContract } from '../testing/event-log.contract';
import { KafkaEventLog } from './kafka-event-log.adapter';

/** A fresh topic of 3 partitions on the test broker; `reopen` opens another adapter on it. */
async function openKafkaLog(): Promise<EventLogUnderTest> {
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers)
    throw new Error('KAFKA_BROKERS is not set: run the tests through jest (test/infra/global-setup.ts)');
  const options = {
    brokers: brokers.split(','),
    topic: uniqueName('event_log'),
    partitions: 3,
    replicationFactor: 1,
    clientId: 'event-log-contract',
  };
  const opened: EventLog[] = [];
  const openOne = async () => {
    const log = await KafkaEventLog.open(options);
    opened.push(log);
    return log;
  };
  return {
    log: await openOne(),
    reopen: openOne,
    close: async () => {
      await Promise.all(opened.map((log) => log.close()));
    },
  };
}

eventLogContract('kafka', openKafkaLog);
