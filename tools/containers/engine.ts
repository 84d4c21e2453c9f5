import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runCommand, sleep, spawnDaemon } from '@castlog/infra';

/** The container engine this machine has, and the compose command that drives it. */
export interface Engine {
  /** `docker` or `podman`: builds, pulls, inspects, kills. */
  readonly cli: string;
  /** e.g. ['docker', 'compose'], ['docker-compose'] or ['podman-compose']. */
  readonly compose: readonly string[];
  /** Environment for both (DOCKER_HOST at podman's Docker-compatible socket when that is used). */
  readonly env: NodeJS.ProcessEnv;
  readonly description: string;
}

/** Where podman's Docker-compatible API listens when this tool starts it. */
export const PODMAN_SOCKET =
  process.getuid?.() === 0
    ? '/run/podman/podman.sock'
    : join(process.env.XDG_RUNTIME_DIR ?? `/run/user/${process.getuid?.()}`, 'podman', 'podman.sock');

const succeeds = async (command: string, args: string[], env = process.env): Promise<boolean> => {
  try {
    await runCommand(command, args, { env });
    return true;
  } catch {
    return false;
  }
};

/** A Docker engine that answers, else podman (starting its Docker-compatible socket so that
 * `docker compose`, `docker-compose` and testcontainers can drive it); the compose command is the
 * first of `docker compose`, `docker-compose` and `podman-compose` that exists. */
export async function findEngine(log: (line: string) => void): Promise<Engine> {
  if (await succeeds('docker', ['info'])) {
    const compose = await composeCommand(process.env);
    return { cli: 'docker', compose, env: process.env, description: `Docker engine, ${compose.join(' ')}` };
  }
  if (!(await succeeds('podman', ['--version']))) {
    throw new Error(
      'no container engine: neither a Docker engine answers nor podman is installed ' +
        '(on Debian: apt-get install podman runc netavark aardvark-dns iptables slirp4netns uidmap fuse-overlayfs docker-compose)',
    );
  }
  const env = { ...process.env, DOCKER_HOST: `unix://${PODMAN_SOCKET}` };
  await ensurePodmanSocket(env, log);
  const compose = await composeCommand(env);
  return {
    cli: 'podman',
    compose,
    env,
    description: `podman (API at ${PODMAN_SOCKET}), ${compose.join(' ')}`,
  };
}

async function composeCommand(env: NodeJS.ProcessEnv): Promise<string[]> {
  for (const candidate of [['docker', 'compose'], ['docker-compose'], ['podman-compose']]) {
    if (await succeeds(candidate[0]!, [...candidate.slice(1), 'version'], env)) return candidate;
  }
  throw new Error('no compose command: install the Docker Compose plugin, docker-compose or podman-compose');
}

/** Starts `podman system service` on PODMAN_SOCKET unless something answers there already. */
async function ensurePodmanSocket(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<void> {
  const answers = () => succeeds('podman', ['--url', `unix://${PODMAN_SOCKET}`, 'version'], env);
  if (existsSync(PODMAN_SOCKET) && (await answers())) return;
  log(`starting podman's Docker-compatible API on ${PODMAN_SOCKET}`);
  await mkdir(dirname(PODMAN_SOCKET), { recursive: true });
  spawnDaemon('podman', ['system', 'service', '--time=0', `unix://${PODMAN_SOCKET}`], {
    logFile: '/dev/null',
    detached: true,
    stopSignal: 'SIGTERM',
    // The service outlives this checkout and serves later ones: started in a directory that is
    // then deleted, every container it creates fails ("write child: broken pipe" from runc).
    cwd: '/',
  });
  for (let waited = 0; waited < 30_000; waited += 250) {
    if (existsSync(PODMAN_SOCKET) && (await answers())) return;
    await sleep(250);
  }
  throw new Error(`podman system service did not answer on ${PODMAN_SOCKET}`);
}

/** Runs a command with the engine's environment, its output passed through to stderr; rejects on
 * a non-zero exit. */
export function run(
  engine: Engine,
  command: readonly string[],
  options: { input?: string } = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), {
      env: engine.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', process.stderr, process.stderr],
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command.join(' ')} failed (exit code ${code})`)),
    );
  });
}

/** Runs a command with the engine's environment and answers its stdout. */
export function output(engine: Engine, command: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), {
      env: engine.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new Error(`${command.join(' ')} failed (exit code ${code}):\n${stderr.trim()}`)),
    );
    child.stdin.end(input ?? '');
  });
}

export const imageExists = (engine: Engine, image: string): Promise<boolean> =>
  succeeds(engine.cli, ['image', 'inspect', image], engine.env);
