import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startEmbeddedPostgres,
  startLocalKafka,
  type RunningKafka,
  type RunningPostgres,
} from '../../libs/infra/src';
import { dockerAnswers, startContainers } from './containers';

/** Which servers the environment does not already provide. */
export interface Needs {
  kafka: boolean;
  postgres: boolean;
}

export interface Infra {
  source: 'environment' | 'testcontainers' | 'local';
  kafkaBrokers?: string;
  databaseUrl?: string;
  /** Stops what was started here, nothing else. */
  stop(): Promise<void>;
}

/** Kafka and PostgreSQL for the test run: from KAFKA_BROKERS / DATABASE_URL when set, else from
 * containers when a Docker engine answers, else started locally in a temporary directory. */
export async function provisionInfra(env: NodeJS.ProcessEnv): Promise<Infra> {
  const needs = { kafka: !env.KAFKA_BROKERS, postgres: !env.DATABASE_URL };
  const docker = needs.kafka || needs.postgres ? await dockerAnswers() : false;
  // `npm run test:containers` asks for the container path: without an engine that is a failure.
  if (env.CASTLOG_TEST_INFRA === 'testcontainers' && !docker)
    throw new Error(
      'CASTLOG_TEST_INFRA=testcontainers, but no Docker-compatible engine answers (DOCKER_HOST)',
    );
  const infra: Infra =
    !needs.kafka && !needs.postgres
      ? { source: 'environment', stop: async () => undefined }
      : docker
        ? await startContainers(needs)
        : await startLocal(needs);
  env.KAFKA_BROKERS ??= infra.kafkaBrokers;
  env.DATABASE_URL ??= infra.databaseUrl;
  return infra;
}

async function startLocal(needs: Needs): Promise<Infra> {
  const dir = await mkdtemp(join(tmpdir(), 'castlog-test-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its data dir
  const started: (RunningKafka | RunningPostgres)[] = [];
  const track = <T extends RunningKafka | RunningPostgres>(service: T): T => {
    started.push(service);
    return service;
  };
  const stop = async (): Promise<void> => {
    await Promise.all(started.map((service) => service.stop()));
    await rm(dir, { recursive: true, force: true });
  };
  const log = (line: string): void => console.log(`[infra] ${line}`);
  try {
    const [kafka, postgres] = await Promise.all([
      needs.kafka ? startLocalKafka({ dir: join(dir, 'kafka'), log }).then(track) : undefined,
      needs.postgres ? startEmbeddedPostgres({ dataDir: join(dir, 'postgres') }).then(track) : undefined,
    ]);
    return { source: 'local', kafkaBrokers: kafka?.brokers, databaseUrl: postgres?.url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
