import { loadConfig } from '@castlog/config';
import { LOG_EVENT_VERSION, LogEvent } from '@castlog/domain';
import { EventEnvelope, EventLog } from '@castlog/event-log';
import { randomUUID } from 'node:crypto';
import { createTestDatabase } from '../../../test/support/databases';
import { openLogAndDatabase, openRuntime } from './open-runtime';
import { ProjectionStatus } from './operations/projection-status';

/** Appends `n` events of one new user straight to the log. */
const append = (eventLog: EventLog, n: number) => {
  const userId = randomUUID();
  const envelopes: EventEnvelope[] = Array.from({ length: n }, () => {
    const value: LogEvent = { type: 'DeletionRequested', userId, guid: randomUUID() };
    return {
      key: userId,
      type: value.type,
      version: LOG_EVENT_VERSION,
      eventId: randomUUID(),
      requestId: randomUUID(),
      value,
    };
  });
  return eventLog.append(envelopes);
};

/** What the entry points open before Nest starts, on DATABASE_URL without a broker: the migrated
 * database, the table log, the active projection version, and one health for all of them. */
describe('openRuntime', () => {
  it('opens the database migrated, the table log and projection version 1, and closes them', async () => {
    const config = loadConfig({ DATABASE_URL: await createTestDatabase('runtime'), LOG_LEVEL: 'warn' });
    const runtime = await openRuntime(config);
    try {
      expect(runtime.mode).toBe('scaled');
      expect(runtime.dataDir).toBeUndefined();
      expect(runtime.database.schema).toBe(config.READ_MODEL_SCHEMA);
      expect([runtime.readModel.version, runtime.readModel.schema]).toEqual([1, config.READ_MODEL_SCHEMA]);
      expect(runtime.eventLog.partitions).toBe(1);
      await append(runtime.eventLog, 3);
      expect(await runtime.eventLog.endOffsets()).toEqual(new Map([[0, 3]]));

      const status = new ProjectionStatus(config, runtime.database, runtime.eventLog, runtime.readModel);
      expect(status.versions()).toEqual([{ version: 1, schema: config.READ_MODEL_SCHEMA }]);
      expect(await status.lag()).toEqual(new Map([[0, 3]]));
      expect(await status.deletionsByStatus()).toEqual(new Map());
      expect(runtime.health.current()).toEqual([]);
    } finally {
      await runtime.close();
    }
    expect(runtime.database.dataSource.isInitialized).toBe(false);
  });

  it("builds a newer release's version in its own schema while the active version serves reads", async () => {
    const url = await createTestDatabase('runtime');
    const v1 = await openRuntime(loadConfig({ DATABASE_URL: url }));
    await v1.close();
    const config = loadConfig({ DATABASE_URL: url, PROJECTION_VERSION: '2' });
    const v2 = await openRuntime(config);
    try {
      expect(v2.database.schema).toBe(`${config.READ_MODEL_SCHEMA}_v2`);
      expect(v2.readModel.version).toBe(1);
      const status = new ProjectionStatus(config, v2.database, v2.eventLog, v2.readModel);
      expect(status.versions().map(({ version }) => version)).toEqual([1, 2]);
    } finally {
      await v2.close();
    }
  });
});

describe('openLogAndDatabase', () => {
  it('opens the database and the log for the CLI, the same ones the apps use', async () => {
    const config = loadConfig({ DATABASE_URL: await createTestDatabase('runtime') });
    const server = await openRuntime(config);
    try {
      await append(server.eventLog, 2);
      const cli = await openLogAndDatabase(config);
      try {
        expect(await cli.eventLog.endOffsets()).toEqual(new Map([[0, 2]]));
        expect(cli.readModel.schema).toBe(config.READ_MODEL_SCHEMA);
      } finally {
        await cli.close();
      }
    } finally {
      await server.close();
    }
  });
});
