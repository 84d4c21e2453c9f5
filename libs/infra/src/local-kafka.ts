import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { freePorts, isPortFree } from './free-port';
import { Daemon, isAlive, pollUntil, runCommand, spawnDaemon, stopProcess, tailFile } from './process';

/** The Kafka release the local broker runs: the newest 4.x Maven Central serves when this was
 * written, unless CASTLOG_KAFKA_VERSION names another (3.9.x keeps working). */
export const DEFAULT_KAFKA_VERSION = '4.4.0';
export const KAFKA_VERSION = process.env.CASTLOG_KAFKA_VERSION || DEFAULT_KAFKA_VERSION;

/** Kafka 4 logs through log4j2; 3.x through reload4j. */
const usesLog4j2 = (version: string): boolean => Number(version.split('.')[0]) >= 4;

/** Broker settings shared by the local broker and the test container (listeners aside). */
export const KAFKA_BROKER_SETTINGS: Readonly<Record<string, string>> = {
  'num.partitions': '1',
  'auto.create.topics.enable': 'false',
  'offsets.topic.replication.factor': '1',
  'offsets.topic.num.partitions': '1',
  'transaction.state.log.replication.factor': '1',
  'transaction.state.log.min.isr': '1',
  'group.initial.rebalance.delay.ms': '0',
  'message.max.bytes': '4194304',
  'replica.fetch.max.bytes': '4194304',
};

export interface LocalKafkaOptions {
  /** Holds server.properties, logs and the broker's data; reused across starts. */
  dir: string;
  /** Client port; defaults to a free port. */
  port?: number;
  log?: (line: string) => void;
  /** Run in its own session so it outlives this process (stop it with findRunningKafka(dir).stop()). */
  detached?: boolean;
}

export interface RunningKafka {
  /** 127.0.0.1:port */
  brokers: string;
  pid: number;
  stop(): Promise<void>;
}

const MAIN_CLASS = 'kafka.Kafka';
const READY_TIMEOUT_MS = 120_000;
const JVM_OPTS = [
  '-Xms256m',
  '-Xmx512m',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-Djava.awt.headless=true',
];

/** Runs a single-node KRaft Kafka (broker and controller in one JVM) from Maven Central jars. */
export async function startLocalKafka(opts: LocalKafkaOptions): Promise<RunningKafka> {
  const log = opts.log ?? (() => undefined);
  const dir = resolve(opts.dir);
  const running = findRunningKafka(dir);
  if (running) {
    throw new Error(
      `Kafka is already running in ${dir} (pid ${running.pid}, ${running.brokers}); stop it first`,
    );
  }
  if (opts.port && !(await isPortFree(opts.port)))
    throw new Error(`cannot start Kafka: port ${opts.port} is in use`);
  const java = javaCommand();
  await runCommand(java, ['-version'], {
    notFound: `Java 17 is needed to run the local Kafka broker, and "${java}" was not found (install a JDK or set JAVA_HOME)`,
  });
  const libs = await ensureKafkaJars(log);
  await mkdir(join(dir, 'data'), { recursive: true });

  const [port, controllerPort] = opts.port ? [opts.port, (await freePorts(1))[0]] : await freePorts(2);
  const serverProperties = join(dir, 'server.properties');
  await writeFile(serverProperties, serverConfig(dir, port, controllerPort));
  const jvm = [...JVM_OPTS, ...(await loggingOptions(dir)), '-cp', join(libs, '*')];

  if (!existsSync(join(dir, 'data', 'meta.properties'))) {
    log(`formatting Kafka storage in ${dir}`);
    await runCommand(java, [
      ...jvm,
      'kafka.tools.StorageTool',
      'format',
      `--cluster-id=${kafkaClusterId()}`,
      `--config=${serverProperties}`,
    ]);
  }

  const brokers = `127.0.0.1:${port}`;
  const out = join(dir, 'kafka.out');
  const daemon = spawnDaemon(java, [...jvm, MAIN_CLASS, serverProperties], {
    logFile: out,
    detached: opts.detached ?? false,
    stopSignal: 'SIGTERM',
  });
  const pid = daemon.child.pid;
  const handle = pid === undefined ? undefined : kafkaHandle(dir, pid, port, daemon);
  try {
    if (!handle) throw new Error(`could not start ${java}`);
    await writeFile(join(dir, 'kafka.pid'), `${pid}\n`);
    log(`waiting for Kafka on ${brokers} (pid ${pid}, log ${join(dir, 'kafka.log')})`);
    await waitForKafka(brokers, READY_TIMEOUT_MS, daemon.exited);
  } catch (error) {
    await handle?.stop().catch(() => undefined);
    throw new Error(`${(error as Error).message}\n${failureReport(dir)}`);
  }
  log(`Kafka ready on ${brokers}`);
  return handle;
}

/** A random cluster id as Kafka's own Uuid.randomUuid makes it: 16 random bytes, base64url without
 * padding (22 characters), never starting with '-' (kafka-storage would read such an id as an
 * option; Kafka redraws those too). It is passed as `--cluster-id=<id>` as well, for good measure. */
export function kafkaClusterId(random: (size: number) => Buffer = randomBytes): string {
  for (;;) {
    const id = random(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** The broker running in `dir` according to its live kafka.pid, if any. */
export function findRunningKafka(dir: string): RunningKafka | undefined {
  try {
    const pid = Number(readFileSync(join(resolve(dir), 'kafka.pid'), 'utf8'));
    const config = readFileSync(join(resolve(dir), 'server.properties'), 'utf8');
    const port = Number(/^listeners=PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/m.exec(config)?.[1]);
    return pid > 0 && port > 0 && isAlive(pid, MAIN_CLASS) ? kafkaHandle(resolve(dir), pid, port) : undefined;
  } catch {
    return undefined;
  }
}

/** The broker's ERROR lines (else the end of its log) and the end of its console output. */
function failureReport(dir: string): string {
  const [logFile, out] = [join(dir, 'kafka.log'), join(dir, 'kafka.out')];
  const errors = tailFile(logFile, 15, / (ERROR|FATAL) /) || tailFile(logFile, 30);
  return `--- ${logFile} ---\n${errors}\n--- ${out} ---\n${tailFile(out, 15)}`;
}

/** `daemon` when this process started the broker: stopping it then also waits until it is reaped. */
function kafkaHandle(dir: string, pid: number, port: number, daemon?: Daemon): RunningKafka {
  const stop = async (): Promise<void> => {
    await stopProcess(pid, MAIN_CLASS, 'SIGTERM', 20_000, 'SIGKILL');
    await daemon?.reaped();
    await rm(join(dir, 'kafka.pid'), { force: true });
  };
  return { brokers: `127.0.0.1:${port}`, pid, stop };
}

/** Waits until the brokers answer a metadata request with a live broker, and a group coordinator answers. */
export async function waitForKafka(
  brokers: string,
  timeoutMs: number,
  exited: () => string | undefined = () => undefined,
): Promise<void> {
  const kafka = new Kafka({
    clientId: 'castlog-infra-probe',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    retry: { retries: 0 },
  });
  await pollUntil(
    `Kafka on ${brokers}`,
    timeoutMs,
    async () => {
      const admin = kafka.admin();
      try {
        await admin.connect();
        if ((await admin.describeCluster()).brokers.length === 0) return false;
        // Creates __consumer_offsets and waits for its coordinator, so a first consumer joins cleanly.
        await admin.describeGroups(['castlog-infra-probe']);
        return true;
      } catch {
        return false;
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
    },
    exited,
  );
}

/** ${CASTLOG_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/castlog} */
export function castlogCacheDir(): string {
  return (
    process.env.CASTLOG_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'castlog')
  );
}

/** Answers the directory holding every runtime jar of the broker, fetching them with Maven once. The
 * download lands in a scratch directory renamed into place, so an interrupted run leaves no half cache. */
export async function ensureKafkaJars(log: (line: string) => void = () => undefined): Promise<string> {
  const home = join(castlogCacheDir(), `kafka-${KAFKA_VERSION}`);
  const libs = join(home, 'libs');
  if (existsSync(libs)) return libs;
  await mkdir(castlogCacheDir(), { recursive: true });
  const scratch = await mkdtemp(`${home}.partial-`);
  try {
    log(`fetching Kafka ${KAFKA_VERSION} jars from Maven Central into ${home}`);
    await writeFile(join(scratch, 'pom.xml'), POM);
    await runCommand(
      'mvn',
      [
        '-q',
        '-B',
        '-f',
        join(scratch, 'pom.xml'),
        'dependency:copy-dependencies',
        '-DincludeScope=runtime',
        `-DoutputDirectory=${join(scratch, 'libs')}`,
      ],
      { notFound: 'Maven ("mvn") is needed once to fetch the Kafka jars, and was not found on PATH' },
    );
    await rename(scratch, home).catch((error: unknown) => {
      if (!existsSync(libs)) throw error; // otherwise a concurrent run finished first: use its jars
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return libs;
}

function javaCommand(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

function serverConfig(dir: string, port: number, controllerPort: number): string {
  const settings: Record<string, string> = {
    'process.roles': 'broker,controller',
    'node.id': '1',
    'controller.quorum.voters': `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': join(dir, 'data'),
    ...KAFKA_BROKER_SETTINGS,
  };
  return Object.entries(settings)
    .map(([key, value]) => `${key}=${value}\n`)
    .join('');
}

/** The JVM options that send the broker's log to `<dir>/kafka.log`, rolled at 50 MB. */
async function loggingOptions(dir: string): Promise<string[]> {
  const file = join(dir, 'kafka.log');
  if (usesLog4j2(KAFKA_VERSION)) {
    const config = join(dir, 'log4j2.properties');
    await writeFile(config, log4j2Config(file));
    return [`-Dlog4j2.configurationFile=${pathToFileURL(config).href}`];
  }
  const config = join(dir, 'log4j.properties');
  await writeFile(config, log4jConfig(file));
  return [`-Dlog4j.configuration=${pathToFileURL(config).href}`];
}

function log4jConfig(file: string): string {
  return [
    'log4j.rootLogger=INFO, file',
    'log4j.logger.kafka.request.logger=WARN',
    'log4j.appender.file=org.apache.log4j.RollingFileAppender',
    `log4j.appender.file.File=${file}`,
    'log4j.appender.file.MaxFileSize=50MB',
    'log4j.appender.file.MaxBackupIndex=2',
    'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n',
    '',
  ].join('\n');
}

function log4j2Config(file: string): string {
  return [
    'status = warn',
    'appender.file.type = RollingFile',
    'appender.file.name = file',
    `appender.file.fileName = ${file}`,
    `appender.file.filePattern = ${file}.%i`,
    'appender.file.layout.type = PatternLayout',
    'appender.file.layout.pattern = [%d] %p %m (%c)%n',
    'appender.file.policies.type = Policies',
    'appender.file.policies.size.type = SizeBasedTriggeringPolicy',
    'appender.file.policies.size.size = 50MB',
    'appender.file.strategy.type = DefaultRolloverStrategy',
    'appender.file.strategy.max = 2',
    'rootLogger.level = info',
    'rootLogger.appenderRef.file.ref = file',
    'logger.request.name = kafka.request.logger',
    'logger.request.level = warn',
    '',
  ].join('\n');
}

/** The broker's runtime jars and a logging binding for its slf4j 1.7 API. */
const loggingDependency = (version: string): string =>
  usesLog4j2(version)
    ? '<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.24.3</version></dependency>\n' +
      '    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.24.3</version></dependency>'
    : '<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>';

const POM = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>castlog</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>${KAFKA_VERSION}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>${KAFKA_VERSION}</version></dependency>
    ${loggingDependency(KAFKA_VERSION)}
  </dependencies>
  <build>
    <pluginManagement>
      <plugins>
        <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version></plugin>
      </plugins>
    </pluginManagement>
  </build>
</project>
`;
