import type { StartedTestContainer } from 'testcontainers';
import { Client } from 'pg';
import { KAFKA_BROKER_SETTINGS, KAFKA_VERSION, freePort, waitForKafka } from '../../libs/infra/src';
import { pollUntil } from '../../libs/infra/src/process';
import type { Infra, Needs } from './provision';

/** True when testcontainers finds a Docker (or compatible) engine within `timeoutMs`. */
export async function dockerAnswers(timeoutMs = 5000): Promise<boolean> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  try {
    return await Promise.race([
      getContainerRuntimeClient().then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function startContainers(needs: Needs): Promise<Infra> {
  const started: StartedTestContainer[] = [];
  const stop = async (): Promise<void> => void (await Promise.all(started.map((c) => c.stop())));
  try {
    const [kafkaBrokers, databaseUrl] = await Promise.all([
      needs.kafka ? startKafka(started) : undefined,
      needs.postgres ? startPostgres(started) : undefined,
    ]);
    return { source: 'testcontainers', kafkaBrokers, databaseUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** apache/kafka is not the Confluent image @testcontainers/kafka drives, so a generic container
 * with the same settings as the local broker; its advertised port is fixed before start. */
async function startKafka(started: StartedTestContainer[]): Promise<string> {
  const { GenericContainer, getContainerRuntimeClient } = await import('testcontainers');
  const host = (await getContainerRuntimeClient()).info.containerRuntime.host;
  const port = await freePort();
  const settings = Object.fromEntries(
    Object.entries(KAFKA_BROKER_SETTINGS).map(([key, value]) => [
      `KAFKA_${key.toUpperCase().replace(/\./g, '_')}`,
      value,
    ]),
  );
  const container = await new GenericContainer(`apache/kafka:${KAFKA_VERSION}`)
    .withExposedPorts({ container: 9092, host: port })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_LISTENERS: 'PLAINTEXT://0.0.0.0:9092,CONTROLLER://localhost:9093',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${host}:${port}`,
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'PLAINTEXT',
      ...settings,
    })
    .start();
  started.push(container);
  const brokers = `${host}:${port}`;
  await waitForKafka(brokers, 120_000);
  return brokers;
}

async function startPostgres(started: StartedTestContainer[]): Promise<string> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { Wait } = await import('testcontainers');
  // Ready when the server listens on its port: not by the image's health check, which podman
  // without systemd never runs.
  const container = await new PostgreSqlContainer('postgres:17')
    .withWaitStrategy(Wait.forListeningPorts())
    .start();
  started.push(container);
  const url = container.getConnectionUri();
  // A server that listens may still be starting up (57P03): ready when it answers a query.
  await pollUntil(
    'PostgreSQL in its container',
    60_000,
    () => answersQuery(url),
    () => undefined,
  );
  return url;
}

async function answersQuery(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
