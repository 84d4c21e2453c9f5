import { Kafka, logLevel } from 'kafkajs';
import { Client } from 'pg';
import { uniqueName } from '../support/databases';

/** Proves that global setup handed the workers a real Kafka and a real PostgreSQL. */
describe('provisioned infrastructure', () => {
  it('Kafka creates a topic, then delivers a produced message to a consumer', async () => {
    const kafka = new Kafka({
      clientId: 'infra-spec',
      brokers: required('KAFKA_BROKERS').split(','),
      logLevel: logLevel.NOTHING,
    });
    const topic = uniqueName('infra');
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true })).toBe(
        true,
      );
    } finally {
      await admin.disconnect();
    }

    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ key: 'k', value: 'hello' }] });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId: topic });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      const received = new Promise<string>((resolve) => {
        void consumer.run({ eachMessage: async ({ message }) => resolve(String(message.value)) });
      });
      await expect(received).resolves.toBe('hello');
    } finally {
      await consumer.disconnect();
    }
  });

  it('PostgreSQL answers a query', async () => {
    const client = new Client({ connectionString: required('DATABASE_URL') });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: string }>('select version()');
      expect(rows[0]?.version).toMatch(/^PostgreSQL \d+/);
    } finally {
      await client.end();
    }
  });
});

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run through jest, whose global setup provides it`);
  return value;
}
