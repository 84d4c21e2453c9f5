import { Client, Pool } from 'pg';
import { QueryRunner } from 'typeorm';
import { createTestDatabase } from '../../../../test/support/databases';
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
