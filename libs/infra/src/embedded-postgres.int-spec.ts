import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { findRunningPostgres, startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres';

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
    const { pid } = running;
    await running.stop();
    expect(() => process.kill(pid, 0)).toThrow(); // really gone, no orphan
    expect(findRunningPostgres(dataDir)).toBeUndefined();

    running = await startEmbeddedPostgres({ dataDir });
    expect(await query(running.url, 'select note from kept')).toEqual([{ note: 'survives' }]);
  });

  it('refuses a second server on a directory in use, and the first one keeps serving', async () => {
    const first = (running ??= await startEmbeddedPostgres({ dataDir }));
    await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(
      `PostgreSQL is already running on ${dataDir} (pid ${first.pid}, port ${first.port})`,
    );
    expect(findRunningPostgres(dataDir)?.pid).toBe(first.pid);
    expect(await query(first.url, 'select count(*)::int as n from kept')).toEqual([{ n: 1 }]);
  });
});

async function query(url: string, sql: string, params: unknown[] = []): Promise<unknown[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}
