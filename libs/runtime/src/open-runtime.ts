import { Config } from '@castlog/config';
import { EventLog, KafkaEventLog, PostgresEventLog } from '@castlog/event-log';
import { openActiveProjection, poolOf, projectionSchema } from '@castlog/read-model';
import { connectionSettings, DependencyHealth, ignoreLog, LogFn, supervisePool } from '@castlog/supervision';
import { resolve } from 'node:path';
import { Pool } from 'pg';
import { Closers } from './closers';
import { lockDataDir } from './data-dir.lock';
import { openDatabaseAt } from './database';
import { embeddedPostgresDir, openEmbeddedDatabase } from './embedded-database';
import { superviseEmbeddedPostgres } from './embedded-postgres.supervisor';
import { Runtime } from './runtime.module';

export type { LogFn } from '@castlog/supervision';
export { embeddedPostgresDir } from './embedded-database';

/** Names under which connections report to DependencyHealth (and /health/ready, and metrics). */
export const COMPONENTS = {
  readModel: 'postgres',
  eventLog: 'event-log',
  embeddedServer: 'embedded-postgres',
} as const;

export interface OpenedRuntime extends Runtime {
  /** `embedded` when PostgreSQL runs from the data directory and the log is its table. */
  readonly mode: 'embedded' | 'scaled';
  readonly dataDir?: string;
  /** Closes the log, the database and, when this runtime started it, the database server. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  readonly log?: LogFn;
  /** Called when the process cannot go on (embedded PostgreSQL cannot be restarted): the caller
   * stops what it runs, then exits non-zero. */
  readonly fatal?: (reason: string) => void;
  /** For a CLI command rather than a server: the embedded server is the running one, else one
   * started for the command and stopped after it, and the data directory is not locked. */
  readonly command?: boolean;
}

/** The schema of the projection version this release builds. */
const ownSchema = (config: Config): string =>
  projectionSchema(config.READ_MODEL_SCHEMA, config.PROJECTION_VERSION);

/** Where a runtime's database lives: DATABASE_URL's server, or the embedded one under
 * CASTLOG_DATA_DIR. A server process takes the data directory's lock, and the server it starts is
 * restarted when it dies (reported to `health`). `close` stops what it started, once however often
 * it is called. */
export interface DatabaseServer {
  readonly url: string;
  readonly embedded: boolean;
  readonly health: DependencyHealth;
  close(): Promise<void>;
}

export async function startDatabaseServer(
  config: Config,
  options: RuntimeOptions = {},
): Promise<DatabaseServer> {
  const log = options.log ?? ignoreLog;
  const closers = new Closers(log);
  const server = {
    embedded: !config.DATABASE_URL,
    health: new DependencyHealth(),
    close: () => closers.close(),
  };
  if (config.DATABASE_URL) return { ...server, url: config.DATABASE_URL };
  return closers.opening(async () => {
    if (!options.command) closers.add(undefined, lockDataDir(resolve(config.CASTLOG_DATA_DIR)));
    const { url, started } = await openEmbeddedDatabase(config, {
      server: !options.command,
      log: (line) => log('info', line),
    });
    if (started && options.command) closers.add(started, () => started.stop());
    else if (started) {
      const supervisor = superviseEmbeddedPostgres(started, {
        dataDir: embeddedPostgresDir(config),
        component: COMPONENTS.embeddedServer,
        health: server.health,
        log,
        giveUp: (reason) => (options.fatal ?? ((text) => log('error', text)))(reason),
      });
      closers.add(supervisor, () => supervisor.stop());
    }
    return { ...server, url };
  });
}

/** Opens what castlog runs on: the read-model database (migrated, its pool `poolSize` connections,
 * DATABASE_POOL_SIZE unless given), the projection version reads go to, and the event log — Kafka
 * when KAFKA_BROKERS is set, else the PostgreSQL table log — on `options.server`, else on a server
 * it starts (`startDatabaseServer`). Every connection reports to the server's DependencyHealth.
 * `close` closes everything in the reverse order of opening, the server last; a failure to open
 * closes what was opened but leaves a given server running, so that the caller can try again on it
 * without restarting embedded PostgreSQL. */
export async function openRuntime(
  config: Config,
  options: RuntimeOptions & { readonly server?: DatabaseServer; readonly poolSize?: number } = {},
): Promise<OpenedRuntime> {
  const log = options.log ?? ignoreLog;
  const closers = new Closers(log);
  return closers.opening(async () => {
    const server = options.server ?? (await startDatabaseServer(config, options));
    if (options.server === undefined) closers.add(server, () => server.close());
    const poolSize = options.poolSize ?? config.DATABASE_POOL_SIZE;
    const database = await openDatabaseAt(
      server.url,
      ownSchema(config),
      poolSize,
      config.DATABASE_CONNECT_TIMEOUT,
    );
    closers.add(database, () => database.close());
    const readModel = await openActiveProjection(
      database,
      config.READ_MODEL_SCHEMA,
      config.PROJECTION_VERSION,
    );
    const supervision = supervisePool(poolOf(database.dataSource), COMPONENTS.readModel, server.health, log);
    closers.add(supervision, () => supervision.close());
    const eventLog = await openEventLog(config, server.url, closers, server.health, log);
    // Opened, the runtime owns a server it was given: closing it stops the server too.
    if (options.server !== undefined) closers.last(() => server.close());
    return {
      config,
      database,
      readModel,
      eventLog,
      health: server.health,
      mode: server.embedded ? 'embedded' : 'scaled',
      ...(server.embedded ? { dataDir: resolve(config.CASTLOG_DATA_DIR) } : {}),
      close: () => closers.close(),
    };
  });
}

/** The event log: Kafka when KAFKA_BROKERS is set, else the table log in the database at `url`,
 * on a pool of its own; what it opens goes to `closers`. */
async function openEventLog(
  config: Config,
  url: string,
  closers: Closers,
  health: DependencyHealth,
  log: LogFn,
): Promise<EventLog> {
  if (config.KAFKA_BROKERS) {
    const eventLog = await KafkaEventLog.open({
      brokers: config.KAFKA_BROKERS.split(','),
      topic: config.KAFKA_TOPIC,
      partitions: config.KAFKA_PARTITIONS,
      replicationFactor: config.KAFKA_REPLICATION_FACTOR,
      clientId: config.KAFKA_CLIENT_ID,
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT,
      component: COMPONENTS.eventLog,
      health,
      log,
    });
    return closers.add(eventLog, () => eventLog.close());
  }
  const pool = new Pool({
    connectionString: url,
    max: Math.max(4, Math.ceil(config.DATABASE_POOL_SIZE / 2)),
    ...connectionSettings(config.DATABASE_CONNECT_TIMEOUT),
  });
  closers.add(pool, () => pool.end());
  const supervision = supervisePool(pool, COMPONENTS.eventLog, health, log);
  closers.add(supervision, () => supervision.close());
  const eventLog = new PostgresEventLog(pool, { log });
  return closers.add(eventLog, () => eventLog.close());
}

/** The database alone, for the CLI's user and token commands: DATABASE_URL, or the embedded server
 * of CASTLOG_DATA_DIR (the running one, else started for the command and stopped after it). */
export async function openDatabase(
  config: Config,
): Promise<{ dataSource: OpenedRuntime['database']['dataSource']; close(): Promise<void> }> {
  const closers = new Closers(ignoreLog);
  return closers.opening(async () => {
    const server = await startDatabaseServer(config, { command: true });
    closers.add(server, () => server.close());
    const database = await openDatabaseAt(server.url, ownSchema(config), 2);
    closers.add(database, () => database.close());
    return { dataSource: database.dataSource, close: () => closers.close() };
  });
}
