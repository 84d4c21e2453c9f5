/** `npm run infra:up` / `infra:down`: local Kafka and PostgreSQL for scaled mode, kept under
 * .castlog/infra/ and outliving this command. Progress goes to stderr; stdout carries only the
 * KAFKA_BROKERS=… and DATABASE_URL=… lines, also written to .castlog/infra.env. */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  findRunningKafka,
  findRunningPostgres,
  isPortFree,
  repoRoot,
  startEmbeddedPostgres,
  startLocalKafka,
  waitForKafka,
  type RunningKafka,
} from '@castlog/infra';

const root = repoRoot(__dirname);
const stateDir = join(root, '.castlog', 'infra');
const postgresDir = join(stateDir, 'postgres');
const kafkaDir = join(stateDir, 'kafka');
const portsFile = join(stateDir, 'ports.json');
const envFile = join(root, '.castlog', 'infra.env');
const log = (line: string): void => console.error(`[infra] ${line}`);

async function up(): Promise<void> {
  await mkdir(stateDir, { recursive: true });
  const ports = await previousPorts();
  // Stopped again if the other service fails, so a failed `up` leaves nothing behind.
  const started: { stop(): Promise<void> }[] = [];
  const track = <T extends { stop(): Promise<void> }>(service: T): T => {
    started.push(service);
    return service;
  };
  const [postgres, kafka] = await Promise.allSettled([
    findRunningPostgres(postgresDir) ??
      startEmbeddedPostgres({ dataDir: postgresDir, port: ports.postgres, detached: true, log }).then(track),
    reuseKafka() ?? startLocalKafka({ dir: kafkaDir, port: ports.kafka, detached: true, log }).then(track),
  ]);
  if (postgres.status === 'rejected' || kafka.status === 'rejected') {
    await Promise.all(started.map((service) => service.stop()));
    throw [postgres, kafka].flatMap((result) => (result.status === 'rejected' ? [result.reason] : []))[0];
  }
  await writeFile(
    portsFile,
    JSON.stringify({ postgres: postgres.value.port, kafka: kafkaPort(kafka.value) }),
  );
  const env = `KAFKA_BROKERS=${kafka.value.brokers}\nDATABASE_URL=${postgres.value.url}\n`;
  // DATABASE_URL carries the embedded PostgreSQL's password: readable by this account only.
  await writeFile(envFile, env, { mode: 0o600 });
  await chmod(envFile, 0o600);
  process.stdout.write(env);
}

async function down(): Promise<void> {
  const running = [findRunningKafka(kafkaDir), findRunningPostgres(postgresDir)].filter(
    (s) => s !== undefined,
  );
  await Promise.all(running.map((service) => service.stop()));
  await rm(envFile, { force: true });
  log(running.length ? `stopped ${running.map((s) => `pid ${s.pid}`).join(' and ')}` : 'nothing was running');
}

/** A broker left by an earlier `up` (which may still be starting: wait for it to answer). */
function reuseKafka(): Promise<RunningKafka> | undefined {
  const kafka = findRunningKafka(kafkaDir);
  return kafka && waitForKafka(kafka.brokers, 120_000).then(() => kafka);
}

const kafkaPort = (kafka: RunningKafka): number => Number(kafka.brokers.split(':')[1]);

/** The ports of the last `up`, when still free, so the printed lines stay the same across restarts. */
async function previousPorts(): Promise<{ postgres?: number; kafka?: number }> {
  if (!existsSync(portsFile)) return {};
  const saved = JSON.parse(await readFile(portsFile, 'utf8')) as { postgres?: number; kafka?: number };
  const keep = async (port?: number) => (port && (await isPortFree(port)) ? port : undefined);
  return { postgres: await keep(saved.postgres), kafka: await keep(saved.kafka) };
}

const commands: Record<string, () => Promise<void>> = { up, down };
const command = commands[process.argv[2] ?? ''];
if (!command) {
  console.error('usage: infra (up|down)');
  process.exit(2);
}
command().catch((error: unknown) => {
  console.error(`[infra] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
