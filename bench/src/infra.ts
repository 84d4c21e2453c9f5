import { configSchema, loadConfig } from '@castlog/config';
import { startEmbeddedPostgres, startLocalKafka } from '@castlog/infra';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface BenchInfra {
  readonly kafkaBrokers: string;
  /** The server's URL; each run creates its own database on it. */
  readonly databaseUrl: string;
  /** Where each came from: the environment, .castlog/infra.env, or started here. */
  readonly source: { kafka: string; postgres: string };
  /** The broker's log directory when the broker runs on this machine from a known directory
   * (started here, or by `npm run infra:up`): the topic's segment files give its bytes on disk. */
  readonly kafkaLogDir?: string;
  /** Stops what was started here, nothing else. */
  stop(): Promise<void>;
}

/** castlog's settings that the bench reads from its environment: where Kafka and PostgreSQL are.
 * It sets every other one itself (`benchConfig`). */
const INFRA_SETTINGS = ['KAFKA_BROKERS', 'DATABASE_URL'] as const;

/** castlog's settings set in `env` that a bench run does not apply, so that a run started with, say,
 * PROJECTOR_BATCH_SIZE=500 says that it measured the bench's own value instead. */
export const settingsNotApplied = (env: NodeJS.ProcessEnv): string[] =>
  Object.keys(configSchema.shape).filter(
    (name) => !(INFRA_SETTINGS as readonly string[]).includes(name) && env[name] !== undefined,
  );

/** castlog's settings that say where a bench run's castlog runs (its database, topic and consumer
 * group; the cold start's data directory and address): the bench chooses them, `--set` cannot. */
const WHERE_SETTINGS = [
  ...INFRA_SETTINGS,
  'KAFKA_TOPIC',
  'PROJECTOR_GROUP',
  'CASTLOG_DATA_DIR',
  'PORT',
  'HOST',
] as const;

/** castlog settings for castlog's side of every scenario, from `--set NAME=value` (each given once):
 * names castlog knows, other than WHERE_SETTINGS, with values its configuration accepts. Throws
 * what is wrong otherwise. */
export function castlogSettings(pairs: readonly string[]): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const pair of pairs) {
    const [, name, value] = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(pair) ?? [];
    if (name === undefined || value === undefined) throw new Error(`--set ${pair}: not NAME=value`);
    if (!(name in configSchema.shape)) throw new Error(`--set ${pair}: castlog has no setting ${name}`);
    if ((WHERE_SETTINGS as readonly string[]).includes(name))
      throw new Error(`--set ${pair}: the bench chooses ${name} itself`);
    if (name in settings) throw new Error(`--set ${pair}: ${name} is set twice`);
    settings[name] = value;
  }
  // As castlog would refuse it: a value out of range fails here, before anything is measured.
  loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/bench', KAFKA_BROKERS: '127.0.0.1:9092', ...settings });
  return settings;
}

/** KAFKA_BROKERS / DATABASE_URL from the environment, else from `.castlog/infra.env` (written by
 * `npm run infra:up`), else a local Kafka and embedded PostgreSQL started in a temporary directory
 * for this run and stopped at its end. */
export async function benchInfra(log: (line: string) => void): Promise<BenchInfra> {
  const fromFile = readInfraEnv();
  const pick = (name: (typeof INFRA_SETTINGS)[number]) =>
    process.env[name]
      ? { value: process.env[name], source: 'environment' }
      : fromFile[name]
        ? { value: fromFile[name], source: '.castlog/infra.env' }
        : undefined;
  const kafka = pick('KAFKA_BROKERS');
  const postgres = pick('DATABASE_URL');
  if (kafka && postgres) {
    const logDir = localLogDir(kafka.value);
    return {
      kafkaBrokers: kafka.value,
      databaseUrl: postgres.value,
      source: { kafka: kafka.source, postgres: postgres.source },
      ...(logDir ? { kafkaLogDir: logDir } : {}),
      stop: async () => undefined,
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'castlog-bench-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its data dir
  const started: { stop(): Promise<void> }[] = [];
  const stop = async () => {
    await Promise.all(started.map((service) => service.stop().catch(() => undefined)));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    log(
      `starting ${[kafka ? '' : 'Kafka', postgres ? '' : 'PostgreSQL'].filter(Boolean).join(' and ')} in ${dir}`,
    );
    const [startedKafka, startedPostgres] = await Promise.all([
      kafka ? undefined : startLocalKafka({ dir: join(dir, 'kafka'), log }),
      postgres ? undefined : startEmbeddedPostgres({ dataDir: join(dir, 'postgres'), log }),
    ]);
    if (startedKafka) started.push(startedKafka);
    if (startedPostgres) started.push(startedPostgres);
    const kafkaBrokers = kafka?.value ?? (startedKafka?.brokers as string);
    const logDir = localLogDir(kafkaBrokers, startedKafka ? [join(dir, 'kafka')] : []);
    return {
      kafkaBrokers,
      ...(logDir ? { kafkaLogDir: logDir } : {}),
      databaseUrl: postgres?.value ?? (startedPostgres?.url as string),
      source: {
        kafka: kafka?.source ?? 'started for this run',
        postgres: postgres?.source ?? 'started for this run',
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The `.castlog` directory of the checkout, if there is one. */
function castlogDir(): string | undefined {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, '.castlog'))) return join(dir, '.castlog');
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bench'))) break;
  }
  return undefined;
}

/** The `log.dirs` of the broker in one of `kafkaDirs` (or `npm run infra:up`'s) whose advertised
 * listener is `brokers`; undefined for a broker elsewhere. */
function localLogDir(brokers: string, kafkaDirs: readonly string[] = []): string | undefined {
  const infraDir = castlogDir();
  const candidates = [...kafkaDirs, ...(infraDir ? [join(infraDir, 'infra', 'kafka')] : [])];
  for (const dir of candidates) {
    const file = join(dir, 'server.properties');
    if (!existsSync(file)) continue;
    const settings = Object.fromEntries(
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => /^([a-z.]+)=(.*)$/.exec(line.trim()))
        .filter((match): match is RegExpExecArray => match !== null)
        .map((match) => [match[1] as string, match[2] as string]),
    );
    const advertised = settings['advertised.listeners'] ?? '';
    const logDirs = settings['log.dirs'];
    if (logDirs && !logDirs.includes(',') && advertised.includes(`//${brokers}`)) return logDirs;
  }
  return undefined;
}

function readInfraEnv(): Record<string, string> {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, '.castlog', 'infra.env');
    if (existsSync(file)) {
      return Object.fromEntries(
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line) => /^([A-Z_]+)=(.*)$/.exec(line.trim()))
          .filter((match): match is RegExpExecArray => match !== null)
          .map((match) => [match[1] as string, match[2] as string]),
      );
    }
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bench'))) break;
  }
  return {};
}
