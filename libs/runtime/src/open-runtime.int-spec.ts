import { loadConfig } from '@castlog/config';
import { LOG_EVENT_VERSION, LogEvent } from '@castlog/domain';
import { EventEnvelope, EventLog } from '@castlog/event-log';
import { findRunningPostgres, freePort } from '@castlog/infra';
import { isUnavailableError } from '@castlog/supervision';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../../../test/support/databases';
import { openRuntime, startDatabaseServer } from './open-runtime';
import { poolUse } from '@castlog/read-model';
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

/** What `serve` does while Kafka is out of reach at start-up: embedded PostgreSQL is started once,
 * and each attempt to open the rest on it leaves it running. */
describe('openRuntime on a database server it was given', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'castlog-runtime-'));
    await chmod(dataDir, 0o755);
  });
  afterAll(async () => {
    await findRunningPostgres(join(dataDir, 'postgres'))?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps embedded PostgreSQL running across failed attempts, opens on it, and stops it on close', async () => {
    const postgresDir = join(dataDir, 'postgres');
    const embedded = {
      CASTLOG_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      KAFKA_TOPIC: `castlog-runtime-${randomUUID()}`,
    };
    const server = await startDatabaseServer(loadConfig(embedded));
    const postmaster = findRunningPostgres(postgresDir)?.pid;
    expect(postmaster).toBeGreaterThan(0);
    try {
      const unreachable = loadConfig({ ...embedded, KAFKA_BROKERS: `127.0.0.1:${await freePort()}` });
      for (let attempt = 0; attempt < 2; attempt++) {
        const failure = await openRuntime(unreachable, { server }).catch((error: unknown) => error);
        expect(isUnavailableError(failure)).toBe(true);
        expect(findRunningPostgres(postgresDir)?.pid).toBe(postmaster);
      }
      const runtime = await openRuntime(
        loadConfig({ ...embedded, KAFKA_BROKERS: process.env.KAFKA_BROKERS }),
        {
          server,
        },
      );
      expect(runtime.mode).toBe('embedded');
      expect(runtime.health).toBe(server.health);
      expect(findRunningPostgres(postgresDir)?.pid).toBe(postmaster);
      await append(runtime.eventLog, 1);
      expect(runtime.health.current()).toEqual([]);
      await runtime.close();
    } finally {
      await server.close();
    }
    expect(findRunningPostgres(postgresDir)).toBeUndefined();
  }, 120_000);
});

describe('openRuntime for a command', () => {
  it('opens the database and the log for the CLI, the same ones the apps use, on a pool of the size asked', async () => {
    const config = loadConfig({ DATABASE_URL: await createTestDatabase('runtime') });
    const server = await openRuntime(config);
    try {
      await append(server.eventLog, 2);
      const cli = await openRuntime(config, { command: true, poolSize: 6 });
      try {
        expect(await cli.eventLog.endOffsets()).toEqual(new Map([[0, 2]]));
        expect(cli.readModel.schema).toBe(config.READ_MODEL_SCHEMA);
        expect(poolUse(cli.database.dataSource).size).toBe(6);
        expect(poolUse(server.database.dataSource).size).toBe(config.DATABASE_POOL_SIZE);
      } finally {
        await cli.close();
      }
    } finally {
      await server.close();
    }
  });
});
