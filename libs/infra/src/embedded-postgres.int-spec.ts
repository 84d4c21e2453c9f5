import { readFileSync, statSync } from 'node:fs';
import { appendFile, chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  findRunningPostgres,
  postgresPasswordFile,
  startEmbeddedPostgres,
  type RunningPostgres,
} from './embedded-postgres';

const LEGACY_PASSWORD = 'postgres';

describe('startEmbeddedPostgres', () => {
  let dir: string;
  let dataDir: string;
  let running: RunningPostgres | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'castlog-pg-spec-'));
    await chmod(dir, 0o755); // as root the server runs as the postgres user, which must reach dataDir
    dataDir = join(dir, 'pg');
  });

  afterAll(async () => {
    await running?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps data across a stop and a start on the same directory', async () => {
    running = await startEmbeddedPostgres({ dataDir });
    await query(running.url, 'create table kept (note text)');
    await query(running.url, 'insert into kept values ($1)', ['survives']);
    const password = passwordIn(dataDir);
    const { pid } = running;
    await running.stop();
    expect(() => process.kill(pid, 0)).toThrow(); // really gone, no orphan
    expect(findRunningPostgres(dataDir)).toBeUndefined();

    running = await startEmbeddedPostgres({ dataDir });
    expect(await query(running.url, 'select note from kept')).toEqual([{ note: 'survives' }]);
    expect(passwordIn(dataDir)).toBe(password); // the second start uses the same file
    expect(running.url).toContain(`:${password}@`);
  });

  it('refuses a second server on a directory in use, and the first one keeps serving', async () => {
    const first = (running ??= await startEmbeddedPostgres({ dataDir }));
    await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(
      `PostgreSQL is already running on ${dataDir} (pid ${first.pid}, port ${first.port})`,
    );
    expect(findRunningPostgres(dataDir)?.pid).toBe(first.pid);
    expect(await query(first.url, 'select count(*)::int as n from kept')).toEqual([{ n: 1 }]);
  });

  it('keeps a random password in a 0600 file of its own, and refuses the legacy one', async () => {
    const server = (running ??= await startEmbeddedPostgres({ dataDir }));
    const file = postgresPasswordFile(dataDir);
    expect(file).toBe(join(dataDir, 'castlog.password'));
    const stat = statSync(file);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(stat.uid).toBe(process.getuid?.());
    const password = passwordIn(dataDir);
    expect(password).toMatch(/^[A-Za-z0-9_-]{32,}$/); // 24 random bytes or more, base64url
    expect(password).not.toBe(LEGACY_PASSWORD);

    expect(new URL(server.url).password).toBe(encodeURIComponent(password));
    expect(await query(server.url, 'select current_user as user')).toEqual([{ user: 'postgres' }]);
    expect(await refusal(withPassword(server.url, LEGACY_PASSWORD))).toBe('28P01');
    // No TCP connection is trusted: every host line asks for scram-sha-256.
    expect(hbaMethods(dataDir)).toEqual(['scram-sha-256']);
  });

  it('gives findRunningPostgres a URL that connects', async () => {
    const server = (running ??= await startEmbeddedPostgres({ dataDir }));
    const found = findRunningPostgres(dataDir);
    expect(found?.url).toBe(server.url);
    expect(await query(found!.url, 'select count(*)::int as n from kept')).toEqual([{ n: 1 }]);
  });
});

describe('startEmbeddedPostgres on a data directory made with the legacy password', () => {
  let dir: string;
  let dataDir: string;
  let running: RunningPostgres | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'castlog-pg-legacy-spec-'));
    await chmod(dir, 0o755);
    dataDir = join(dir, 'pg');
    // What an older castlog made: the cluster (initdb --auth=scram-sha-256) with the superuser's
    // password `postgres`, and no password file.
    const made = await startEmbeddedPostgres({ dataDir });
    await query(made.url, 'create table kept (note text)');
    await query(made.url, 'insert into kept values ($1)', ['from before']);
    await query(made.url, `alter role postgres password '${LEGACY_PASSWORD}'`);
    await made.stop();
    await rm(postgresPasswordFile(dataDir));
  });

  afterAll(async () => {
    await running?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('moves it to a random password in the file at the next start', async () => {
    running = await startEmbeddedPostgres({ dataDir });
    const password = passwordIn(dataDir);
    expect(password).not.toBe(LEGACY_PASSWORD);
    expect(statSync(postgresPasswordFile(dataDir)).mode & 0o777).toBe(0o600);
    expect(await refusal(withPassword(running.url, LEGACY_PASSWORD))).toBe('28P01');
    expect(await query(withPassword(running.url, password), 'select note from kept')).toEqual([
      { note: 'from before' },
    ]);
    expect(await query(running.url, 'select 1 as one')).toEqual([{ one: 1 }]);
    expect(await query(findRunningPostgres(dataDir)!.url, 'select 1 as one')).toEqual([{ one: 1 }]);
  });

  it('finishes a migration interrupted after the file was written', async () => {
    const server = (running ??= await startEmbeddedPostgres({ dataDir }));
    const password = passwordIn(dataDir);
    // The file is kept, but the server still has the legacy password.
    await query(server.url, `alter role postgres password '${LEGACY_PASSWORD}'`);
    await server.stop();
    running = undefined;

    running = await startEmbeddedPostgres({ dataDir });
    expect(passwordIn(dataDir)).toBe(password);
    expect(await refusal(withPassword(running.url, LEGACY_PASSWORD))).toBe('28P01');
    expect(await query(running.url, 'select note from kept')).toEqual([{ note: 'from before' }]);
  });

  it('refuses to start when neither the file nor the legacy password is taken, and leaves nothing running', async () => {
    await running?.stop();
    running = undefined;
    const file = postgresPasswordFile(dataDir);
    const password = passwordIn(dataDir);
    await writeFile(file, 'not-the-password\n', { mode: 0o600 });
    try {
      await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(
        `PostgreSQL on ${dataDir} refuses the password in ${file}`,
      );
      expect(findRunningPostgres(dataDir)).toBeUndefined();
    } finally {
      await writeFile(file, `${password}\n`, { mode: 0o600 });
    }
    running = await startEmbeddedPostgres({ dataDir });
    expect(await query(running.url, 'select note from kept')).toEqual([{ note: 'from before' }]);
  });

  it('refuses to start with a pg_hba.conf that trusts TCP connections', async () => {
    await running?.stop();
    running = undefined;
    const hba = join(dataDir, 'pg_hba.conf');
    const original = await readFile(hba, 'utf8');
    await appendFile(hba, 'host all all 127.0.0.1/32 trust\n');
    try {
      await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(`${hba} trusts TCP connections`);
      expect(findRunningPostgres(dataDir)).toBeUndefined();
    } finally {
      await writeFile(hba, original);
    }
    running = await startEmbeddedPostgres({ dataDir });
    expect(await query(running.url, 'select 1 as one')).toEqual([{ one: 1 }]);
  });
});

const passwordIn = (dataDir: string): string => readFileSync(postgresPasswordFile(dataDir), 'utf8').trim();

function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

/** The error code of a connection attempt, undefined when it connects. */
async function refusal(url: string): Promise<string | undefined> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The distinct authentication methods of pg_hba.conf's host lines. */
function hbaMethods(dataDir: string): string[] {
  const hosts = readFileSync(join(dataDir, 'pg_hba.conf'), 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim().split(/\s+/))
    .filter((fields) => fields[0]?.startsWith('host'));
  expect(hosts.length).toBeGreaterThan(0);
  return [...new Set(hosts.map((fields) => fields.at(-1)))].filter((method) => method !== undefined);
}

async function query(url: string, sql: string, params: unknown[] = []): Promise<unknown[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}
