import { Config } from '@castlog/config';
import { EventLog, KafkaEventLog, PostgresEventLog } from '@castlog/event-log';
import {
  findRunningPostgres,
  isAlive,
  onServer,
  RunningPostgres,
  startEmbeddedPostgres,
  withDatabase,
} from '@castlog/infra';
import { connectionSettings, DependencyHealth, ignoreLog, LogFn, supervisePool } from '@castlog/supervision';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import {
  ActiveProjection,
  Database,
  openActiveProjection,
  poolOf,
  projectionSchema,
} from '@castlog/read-model';
import { join, resolve } from 'node:path';
import { Pool } from 'pg';
import { openDatabaseAt } from './database';
import { superviseEmbeddedPostgres } from './embedded-postgres.supervisor';
import { Runtime } from './runtime.module';

export type { LogFn } from '@castlog/supervision';

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
  /** Closes the log, the database and, when this process started it, embedded PostgreSQL. */
  close(): Promise<void>;
}

const EMBEDDED_DATABASE = 'castlog';

/** The schema of the projection version this release builds. */
const ownSchema = (config: Config): string =>
  projectionSchema(config.READ_MODEL_SCHEMA, config.PROJECTION_VERSION);

/** The database, migrated for this release's projection version, and the version reads go to. */
async function openReadModel(
  config: Config,
  url: string,
  poolSize: number,
): Promise<{ database: Database; readModel: ActiveProjection }> {
  const database = await openDatabaseAt(url, ownSchema(config), poolSize, config.DATABASE_CONNECT_TIMEOUT);
  try {
    const readModel = await openActiveProjection(
      database,
      config.READ_MODEL_SCHEMA,
      config.PROJECTION_VERSION,
    );
    return { database, readModel };
  } catch (error) {
    await database.close();
    throw error;
  }
}

export const embeddedPostgresDir = (config: Config): string =>
  join(resolve(config.CASTLOG_DATA_DIR), 'postgres');

/** The database URL: DATABASE_URL, else the embedded server of CASTLOG_DATA_DIR. A server
 * (`start: true`) takes the data directory's lock, and starts PostgreSQL — or adopts one a crashed
 * server left running. The CLI (`start: false`) uses the running server, or starts one for the
 * command. */
export async function databaseUrl(
  config: Config,
  options: { start: boolean; log?: (line: string) => void },
): Promise<{ url: string; started?: RunningPostgres; release?: () => void }> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL };
  const dataDir = embeddedPostgresDir(config);
  const release = options.start ? lockDataDir(resolve(config.CASTLOG_DATA_DIR)) : undefined;
  try {
    const running = findRunningPostgres(dataDir);
    if (running && !options.start) return { url: withDatabase(running.url, EMBEDDED_DATABASE) };
    if (running) options.log?.(`adopting PostgreSQL (pid ${running.pid}) left running on ${dataDir}`);
    // Detached: Ctrl-C reaches the server only through our shutdown, after the API has drained.
    const started =
      running ?? (await startEmbeddedPostgres({ dataDir, log: options.log, detached: options.start }));
    await ensureDatabase(started.url, EMBEDDED_DATABASE);
    return { url: withDatabase(started.url, EMBEDDED_DATABASE), started, release };
  } catch (error) {
    release?.();
    throw error;
  }
}

/** One castlog server per data directory: a pid file, refused while its process lives. */
function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const pidFile = join(dataDir, 'castlog.pid');
  let holder = NaN;
  try {
    holder = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    // no lock yet
  }
  if (holder > 0 && holder !== process.pid && isAlive(holder, 'node')) {
    throw new Error(
      `castlog is already running on the data directory ${dataDir} (pid ${holder}); ` +
        'stop it first or choose another CASTLOG_DATA_DIR',
    );
  }
  writeFileSync(pidFile, String(process.pid));
  return () => rmSync(pidFile, { force: true });
}

async function ensureDatabase(serverUrl: string, name: string): Promise<void> {
  await onServer(serverUrl, async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
  });
}

export interface RuntimeOptions {
  readonly log?: LogFn;
  /** Called when the process cannot go on (embedded PostgreSQL cannot be restarted): the caller
   * stops what it runs, then exits non-zero. */
  readonly fatal?: (reason: string) => void;
}

/** Where a runtime's database lives: DATABASE_URL's server, or the embedded one under
 * CASTLOG_DATA_DIR, started with the data directory's lock and restarted when it dies (reported to
 * `health`). `close` stops what it started, once however often it is called. */
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
  const health = new DependencyHealth();
  const { url, started, release } = await databaseUrl(config, {
    start: true,
    log: (line) => log('info', line),
  });
  const supervisor =
    started &&
    superviseEmbeddedPostgres(started, {
      dataDir: embeddedPostgresDir(config),
      component: COMPONENTS.embeddedServer,
      health,
      log,
      giveUp: (reason) => (options.fatal ?? ((text) => log('error', text)))(reason),
    });
  let closed: Promise<void> | undefined;
  const close = async () => {
    await supervisor?.stop().catch((e) => log('warn', `while closing: ${String(e)}`));
    release?.();
  };
  return { url, embedded: !config.DATABASE_URL, health, close: () => (closed ??= close()) };
}

/** Opens what the apps run on: the read-model database (migrated) and the event log — Kafka when
 * KAFKA_BROKERS is set, else the PostgreSQL table log — on `options.server`, else on a server it
 * starts (`startDatabaseServer`). Every connection reports to the server's DependencyHealth. The
 * runtime's `close` stops the server too; a failure to open leaves a given server running, so that
 * the caller can try again on it without restarting embedded PostgreSQL. */
export async function openRuntime(
  config: Config,
  options: RuntimeOptions & { readonly server?: DatabaseServer } = {},
): Promise<OpenedRuntime> {
  const log = options.log ?? ignoreLog;
  const server = options.server ?? (await startDatabaseServer(config, options));
  try {
    const runtime = await assemble(
      config,
      server.url,
      config.DATABASE_POOL_SIZE,
      { log, health: server.health, cleanups: [] },
      server.embedded,
    );
    return {
      ...runtime,
      close: async () => {
        await runtime.close();
        await server.close();
      },
    };
  } catch (error) {
    if (options.server === undefined) await server.close();
    throw error;
  }
}

/** The database and the event log without any consumer, for the CLI's replay and history: like
 * `openDatabase`, it uses DATABASE_URL or the embedded server of CASTLOG_DATA_DIR (the running one,
 * else started for the command and stopped after it), and takes no data-directory lock. */
export async function openLogAndDatabase(config: Config, log: LogFn = ignoreLog): Promise<OpenedRuntime> {
  const { url, started } = await databaseUrl(config, { start: false });
  const cleanups: (() => Promise<void>)[] = [];
  if (started) cleanups.push(() => started.stop());
  return assemble(config, url, 4, { log, health: new DependencyHealth(), cleanups }, !config.DATABASE_URL);
}

/** The read model and the event log on `url`, supervised; on failure, runs `cleanups` (newest
 * first) and rethrows. */
async function assemble(
  config: Config,
  url: string,
  poolSize: number,
  { log, health, cleanups }: { log: LogFn; health: DependencyHealth; cleanups: (() => Promise<void>)[] },
  embedded: boolean,
): Promise<OpenedRuntime> {
  const close = async () => {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((e) => log('warn', `while closing: ${String(e)}`));
  };
  try {
    const { database, readModel } = await openReadModel(config, url, poolSize);
    cleanups.push(() => database.close());
    const supervision = supervisePool(poolOf(database.dataSource), COMPONENTS.readModel, health, log);
    cleanups.push(async () => supervision.close());
    const { eventLog, close: closeLog } = await openEventLog(config, url, log, health);
    cleanups.push(closeLog);
    return {
      config,
      database,
      readModel,
      eventLog,
      health,
      mode: embedded ? 'embedded' : 'scaled',
      ...(embedded ? { dataDir: resolve(config.CASTLOG_DATA_DIR) } : {}),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The event log: Kafka when KAFKA_BROKERS is set, else the table log in the database at `url`.
 * `close` closes the log and whatever it opened for itself. */
export async function openEventLog(
  config: Config,
  url: string,
  log: LogFn = ignoreLog,
  health: DependencyHealth = new DependencyHealth(),
): Promise<{ eventLog: EventLog; close(): Promise<void> }> {
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
    return { eventLog, close: () => eventLog.close() };
  }
  const pool = new Pool({
    connectionString: url,
    max: Math.max(4, Math.ceil(config.DATABASE_POOL_SIZE / 2)),
    ...connectionSettings(config.DATABASE_CONNECT_TIMEOUT),
  });
  const supervision = supervisePool(pool, COMPONENTS.eventLog, health, log);
  const eventLog = new PostgresEventLog(pool, { log });
  return {
    eventLog,
    close: async () => {
      await eventLog.close();
      supervision.close();
      await pool.end();
    },
  };
}

/** The database alone, for the CLI: DATABASE_URL, or the embedded server of CASTLOG_DATA_DIR —
 * the running one when castlog runs, else started for the command and stopped after it. */
export async function openDatabase(
  config: Config,
): Promise<{ dataSource: Database['dataSource']; close(): Promise<void> }> {
  const { url, started } = await databaseUrl(config, { start: false });
  try {
    const database = await openDatabaseAt(url, ownSchema(config), 2);
    return {
      dataSource: database.dataSource,
      close: async () => {
        await database.close();
        await started?.stop();
      },
    };
  } catch (error) {
    await started?.stop();
    throw error;
  }
}
