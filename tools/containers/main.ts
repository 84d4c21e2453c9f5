/** `npm run containers:up` / `containers:down` / `containers:build`: the compose stack of
 * docker/compose.yaml on whatever engine this machine has (Docker, or podman through its
 * Docker-compatible socket), with stand-in base images built where no registry answers. Progress
 * goes to stderr; stdout carries only the API_URL=… and DATABASE_URL=… lines of `up`, also
 * written to .castlog/containers.env. */
import { Command } from 'commander';
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePorts, repoRoot } from '@castlog/infra';
import { Engine, findEngine, output, run } from './engine';
import { BASE_IMAGES, ensureBaseImages } from './standins';

const root = repoRoot(__dirname);
const composeFile = join(root, 'docker', 'compose.yaml');
const envFile = join(root, '.castlog', 'containers.env');
const log = (line: string): void => console.error(`[containers] ${line}`);

export const STACK = {
  project: process.env.CASTLOG_PROJECT || 'castlog',
  image: `castlog:${process.env.CASTLOG_TAG || 'latest'}`,
  port: Number(process.env.CASTLOG_PORT || 3000),
  postgresPort: Number(process.env.CASTLOG_POSTGRES_PORT || 5433),
  postgresPassword: process.env.POSTGRES_PASSWORD || 'castlog',
};
const READY_TIMEOUT_MS = 300_000;

export const compose = (engine: Engine, ...args: string[]): string[] => [
  ...engine.compose,
  '-p',
  STACK.project,
  '-f',
  composeFile,
  ...args,
];

/** The base images (pulled, or stand-ins), then the castlog image from the working tree. */
export async function buildImages(engine: Engine): Promise<void> {
  log(`engine: ${engine.description}`);
  await ensureBaseImages(engine, log);
  log(`building ${STACK.image} from docker/Dockerfile`);
  const started = Date.now();
  await run(engine, [
    engine.cli,
    'build',
    '-f',
    join(root, 'docker', 'Dockerfile'),
    '--build-arg',
    `NODE_IMAGE=${BASE_IMAGES.node}`,
    // podman keeps HEALTHCHECK only in the Docker image format.
    ...(engine.cli === 'podman' ? ['--format', 'docker'] : []),
    '-t',
    STACK.image,
    root,
  ]);
  log(`built ${STACK.image} in ${Math.round((Date.now() - started) / 1000)} s`);
  for (const image of [STACK.image, ...Object.values(BASE_IMAGES)]) {
    const size = await output(engine, [engine.cli, 'image', 'inspect', '--format', '{{.Size}}', image]);
    log(`image ${image}: ${(Number(size.trim()) / 1e6).toFixed(0)} MB`);
  }
}

async function up(): Promise<void> {
  const engine = await findEngine(log);
  const env = await startStack(engine);
  await mkdir(join(root, '.castlog'), { recursive: true });
  await writeFile(envFile, env, { mode: 0o600 });
  process.stdout.write(env);
}

/** Builds what is missing, starts the stack and waits until it is ready; answers its
 * API_URL=… and DATABASE_URL=… lines. */
async function startStack(engine: Engine): Promise<string> {
  await buildImages(engine);
  log('starting the stack (Kafka, PostgreSQL, 2 API replicas behind HAProxy, 3 projectors)');
  const apiUrl = `http://127.0.0.1:${STACK.port}`;
  await composeUp(engine);
  await waitUntilReady(apiUrl);
  return (
    `API_URL=${apiUrl}\n` +
    `DATABASE_URL=postgres://castlog:${encodeURIComponent(STACK.postgresPassword)}@127.0.0.1:${STACK.postgresPort}/castlog\n`
  );
}

/** `npm run test:containers`: the stack tests (test/containers) against a stack of its own
 * (see isolateTestStack), then the event-log contract suite and one e2e file with the test
 * setup's testcontainers path on the same engine; the stack and its volumes are removed at the end. */
async function test(): Promise<void> {
  await isolateTestStack();
  const engine = await findEngine(log);
  const failures: string[] = [];
  try {
    const env = Object.fromEntries(
      (await startStack(engine))
        .trim()
        .split('\n')
        .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
    );
    if (!(await jest(['-c', 'test/containers/jest.config.js'], { ...process.env, ...env })))
      failures.push('the stack tests (test/containers)');
  } finally {
    await run(engine, compose(engine, 'down', '--volumes')).catch((error: unknown) => log(String(error)));
  }
  const viaTestcontainers: NodeJS.ProcessEnv = {
    ...process.env,
    ...(engine.env.DOCKER_HOST ? { DOCKER_HOST: engine.env.DOCKER_HOST } : {}),
    // Ryuk's image comes from a registry; the setup stops what it starts itself.
    TESTCONTAINERS_RYUK_DISABLED: 'true',
    // Published ports are reached on loopback, not through the engine's bridge address.
    TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1',
    CASTLOG_TEST_INFRA: 'testcontainers',
  };
  delete viaTestcontainers.KAFKA_BROKERS;
  delete viaTestcontainers.DATABASE_URL;
  if (!(await jest(['libs/event-log', 'test/e2e/subscriptions-add.e2e-spec.ts'], viaTestcontainers)))
    failures.push('the event-log suites and subscriptions-add on testcontainers');
  if (failures.length > 0) throw new Error(`failed: ${failures.join('; ')}`);
}

/** Unless CASTLOG_PROJECT, CASTLOG_PORT and CASTLOG_POSTGRES_PORT say otherwise, the test stack is
 * a project of this run's own (castlog-test-<pid>) on free ports, so that two runs on one machine
 * never share containers or ports; the stack tests read the same variables. */
async function isolateTestStack(): Promise<void> {
  const [port, postgresPort] = await freePorts(2);
  process.env.CASTLOG_PROJECT ||= `castlog-test-${process.pid}`;
  process.env.CASTLOG_PORT ||= String(port);
  process.env.CASTLOG_POSTGRES_PORT ||= String(postgresPort);
  STACK.project = process.env.CASTLOG_PROJECT;
  STACK.port = Number(process.env.CASTLOG_PORT);
  STACK.postgresPort = Number(process.env.CASTLOG_POSTGRES_PORT);
  log(`test stack: project ${STACK.project}, port ${STACK.port}, PostgreSQL port ${STACK.postgresPort}`);
}

function jest(args: string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [require.resolve('jest/bin/jest'), ...args], {
      cwd: root,
      env,
      stdio: 'inherit',
    });
    child.on('exit', (code) => resolveRun(code === 0));
  });
}

/** `compose up -d` of the built images (of `services`, or all), with the health checks run
 * meanwhile where the engine does not run them (see runHealthChecks). */
export async function composeUp(engine: Engine, ...services: string[]): Promise<void> {
  const healthChecks = runHealthChecks(engine);
  // The base images ensureBaseImages made sure of, whatever compose.yaml's defaults say.
  const images = {
    CASTLOG_NODE_IMAGE: BASE_IMAGES.node,
    CASTLOG_POSTGRES_IMAGE: BASE_IMAGES.postgres,
    CASTLOG_KAFKA_IMAGE: BASE_IMAGES.kafka,
    CASTLOG_PROXY_IMAGE: BASE_IMAGES.proxy,
  };
  try {
    await run(
      { ...engine, env: { ...engine.env, ...images } },
      compose(engine, 'up', '-d', '--no-build', ...services),
    );
  } finally {
    healthChecks.stop();
  }
}

/** podman runs health checks from systemd timers; without systemd a container's health stays
 * `starting` and compose waits for it for ever. Where that is so, run the stack's health checks
 * here every few seconds (`podman healthcheck run` records the result) while it starts. */
export function runHealthChecks(engine: Engine): { stop(): void } {
  if (engine.cli !== 'podman') return { stop: () => undefined };
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    void checkAll(engine).finally(() => (running = false));
  }, 3_000);
  return { stop: () => clearInterval(timer) };
}

/** Runs the health check of every running container of the stack; answers the names of those
 * that are not healthy. */
export async function checkAll(engine: Engine): Promise<string[]> {
  const listed = await output(engine, [
    engine.cli,
    'ps',
    '--filter',
    `label=com.docker.compose.project=${STACK.project}`,
    '--format',
    '{{.Names}}',
  ]).catch(() => '');
  const unhealthy: string[] = [];
  for (const name of listed.split('\n').filter(Boolean)) {
    const healthy = await output(engine, [engine.cli, 'healthcheck', 'run', name]).then(
      () => true,
      () => false,
    );
    if (!healthy) unhealthy.push(name);
  }
  return unhealthy;
}

/** Until the API answers /health/ready through the proxy (the apps have migrated, the topic
 * exists, the projection is current). */
export async function waitUntilReady(apiUrl: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(new URL('/health/ready', apiUrl));
      if (response.ok) {
        log(`ready: ${apiUrl}`);
        return;
      }
      last = `${response.status} ${await response.text()}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(`the stack did not become ready within ${READY_TIMEOUT_MS / 1000} s (last: ${last})`);
}

async function down(options: { volumes?: boolean }): Promise<void> {
  const engine = await findEngine(log);
  await run(engine, compose(engine, 'down', ...(options.volumes ? ['--volumes'] : [])));
  await rm(envFile, { force: true });
  log(options.volumes ? 'stopped; volumes deleted' : 'stopped; volumes kept (--volumes deletes them)');
}

async function build(): Promise<void> {
  await buildImages(await findEngine(log));
}

if (require.main === module) {
  const program = new Command('containers').description('the castlog compose stack');
  program.command('up').description('build what is missing, start the stack, wait until ready').action(up);
  program
    .command('down')
    .description('stop the stack')
    .option('--volumes', 'also delete the data volumes')
    .action(down);
  program
    .command('build')
    .description('build the images (stand-ins where nothing can be pulled)')
    .action(build);
  program.command('test').description('the container tests, on a stack of their own').action(test);
  program.parseAsync().catch((error: unknown) => {
    log(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
