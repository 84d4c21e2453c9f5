import { randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import { QueryRunner } from 'typeorm';
import { createTestDatabase } from '../../../../test/support/databases';
import { poll } from '../../../../test/support/until';
import { envelopeOf, LogRecord } from '../event-log.port';
import { FETCH_BYTES_PER_PARTITION } from '../kafka/kafka-options';
import { EventLogUnderTest, eventLogContract } from '../testing/event-log.contract';
import { EventLogTable1732400000001 } from './migrations/1732400000001-event-log-table';
import { PostgresEventLog } from './postgres-event-log.adapter';

/** A fresh database holding the event-log table (its migration run as is); `reopen` opens another
 * adapter on its own pool, as a restarted process would. */
async function openTableLog(): Promise<EventLogUnderTest> {
  const url = await createTestDatabase('castlog_event_log');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const runner = { query: (sql: string) => client.query(sql) } as unknown as QueryRunner;
    await new EventLogTable1732400000001().up(runner);
  } finally {
    await client.end();
  }
  const opened: { log: PostgresEventLog; pool: Pool }[] = [];
  const openOne = () => {
    const pool = new Pool({ connectionString: url, max: 10 });
    const log = new PostgresEventLog(pool);
    opened.push({ log, pool });
    return log;
  };
  return {
    log: openOne(),
    reopen: async () => openOne(),
    close: async () => {
      for (const { log, pool } of opened) {
        await log.close();
        await pool.end();
      }
    },
  };
}

eventLogContract('postgres', openTableLog);

describe('postgres event log batches', () => {
  /** A sync request of about 1 MiB: its one action carries a large string, as a POST may. */
  const large = (userId: string) =>
    envelopeOf(
      {
        type: 'SyncActionsPosted',
        userId,
        clientId: randomUUID(),
        actions: [{ type: 'subscription', data: { feed_url: 'x'.repeat(1024 * 1024) } }],
      },
      `req-${randomUUID()}`,
    );

  it('hands a reader and a consumer about what a Kafka fetch takes of a partition at most, however many records that is', async () => {
    const under = await openTableLog();
    try {
      const user = `user-${randomUUID()}`;
      const envelopes = Array.from({ length: 12 }, () => large(user));
      for (const envelope of envelopes) await under.log.append([envelope]);
      const batches: LogRecord[][] = [];
      await under.log.readToEnd(async (batch) => void batches.push([...batch.records]));
      const consumed: LogRecord[][] = [];
      const consumer = await under.log.consume({
        group: `batches-${randomUUID()}`,
        startFrom: async () => 0,
        maxBatchSize: 1000,
        handle: async (batch) => void consumed.push([...batch.records]),
      });
      await poll('the consumer to receive every event', () => consumed.flat().length >= envelopes.length, {
        timeoutMs: 30_000,
      }).finally(() => consumer.stop());

      for (const handed of [batches, consumed]) {
        expect(handed.flat().map((record) => record.eventId)).toEqual(envelopes.map((e) => e.eventId));
        // Each event is about 1 MiB: a batch ends with the one that reaches the fetch's share.
        const most = Math.ceil(FETCH_BYTES_PER_PARTITION / (1024 * 1024)) + 1;
        expect(Math.max(...handed.map((batch) => batch.length))).toBeLessThanOrEqual(most);
        expect(handed.length).toBeGreaterThan(1);
      }
    } finally {
      await under.close();
    }
  }, 60_000);
});
