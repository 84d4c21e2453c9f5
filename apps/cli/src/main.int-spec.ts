import { spawn, StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { AuthStore } from '@castlog/auth';
import { openAuthTestDatabase } from '../../../test/support/databases';
import { WithStore, main, withDatabaseAndLog, withDatabaseStore } from './main';

let dataSource: DataSource;
let store: AuthStore;
let opened = 0;

/** The real store on a test database; the CLI's own config loading and opening are the lead's. */
const withStore: WithStore = async (body) => {
  opened += 1;
  return body(store, { CLI_TOKEN_TTL: 86_400_000 } as Parameters<Parameters<WithStore>[0]>[1]);
};

beforeAll(async () => {
  dataSource = await openAuthTestDatabase('castlog_cli_main');
  store = new AuthStore(dataSource);
});

afterAll(async () => {
  await dataSource?.destroy();
});

async function castlog(args: string[], input = '') {
  const stdout = { text: '', write: (chunk: string) => (stdout.text += chunk) };
  const stderr = { text: '', write: (chunk: string) => (stderr.text += chunk) };
  const stdin = Readable.from([Buffer.from(input, 'utf8')]);
  const code = await main(['node', 'castlog', ...args], { stdout, stderr, stdin }, withStore);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

it('runs users add, list, admin, tokens issue, revoke and users remove end to end', async () => {
  const name = `cli-${randomBytes(4).toString('hex')}`;
  expect(await castlog(['users', 'add', name], 'pw\n')).toEqual({
    code: 0,
    stdout: `Added user ${name}\n`,
    stderr: '',
  });
  expect(await castlog(['users', 'add', name], 'pw\n')).toMatchObject({
    code: 1,
    stderr: `castlog: user ${name} already exists\n`,
  });
  expect((await castlog(['users', 'list'])).stdout).toContain(`${name}\t`);
  expect(await castlog(['users', 'admin', name])).toEqual({
    code: 0,
    stdout: `User ${name} is an administrator\n`,
    stderr: '',
  });
  expect((await castlog(['users', 'list'])).stdout).toMatch(new RegExp(`^${name}\t.*\tadmin$`, 'm'));
  expect(await castlog(['users', 'admin', name, '--off'])).toMatchObject({
    code: 0,
    stdout: `User ${name} is no longer an administrator\n`,
  });
  const admin = `${name}-admin`;
  expect(await castlog(['users', 'add', '--admin', admin], 'pw\n')).toMatchObject({
    code: 0,
    stdout: `Added user ${admin}, an administrator\n`,
  });
  expect(await store.isAdmin((await store.authenticatePassword(admin, 'pw'))!)).toBe(true);

  const issued = await castlog(['tokens', 'issue', name, '--ttl', '90m']);
  expect(issued.code).toBe(0);
  expect(issued.stdout).toMatch(/^cl_[A-Za-z0-9_-]{43}\n$/);
  const token = issued.stdout.trim();
  expect(await store.authenticateToken(token)).not.toBeNull();

  expect(await castlog(['tokens', 'revoke', token])).toMatchObject({ code: 0 });
  expect(await store.authenticateToken(token)).toBeNull();
  expect(await castlog(['users', 'remove', name])).toMatchObject({ code: 0 });
  expect(await castlog(['users', 'remove', name])).toMatchObject({ code: 1 });
});

it('answers usage errors with exit code 1 without opening the database', async () => {
  const before = opened;
  const missing = await castlog(['users', 'add']);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toBe("castlog: missing required argument 'name' (castlog --help for usage)\n");
  expect((await castlog(['users', 'rename', 'x'])).code).toBe(1);
  expect((await castlog(['tokens', 'issue', 'x', '--bogus'])).code).toBe(1);
  expect(opened).toBe(before);
  expect(await castlog(['tokens', 'issue', 'x', '--ttl', '100000000d'])).toMatchObject({
    code: 1,
    stderr: 'castlog: --ttl must be at most 36500d\n',
  });
});

it('prints help with exit code 0', async () => {
  const help = await castlog(['--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('users');
  expect(help.stdout).toContain('tokens');
});

/** The CLI on the environment `env`, opening what it opens for real. */
const run = async (env: NodeJS.ProcessEnv, args: string[]) => {
  const streams = {
    stdout: { write: () => true },
    stderr: { text: '', write: (t: string) => (streams.stderr.text += t) },
  };
  const code = await main(
    ['node', 'castlog', ...args],
    { ...streams, stdin: Readable.from([]) },
    withDatabaseStore(env),
    withDatabaseAndLog(env),
  );
  return { code, stderr: streams.stderr.text };
};

it('names the dependency it cannot reach, where the client names only an address', async () => {
  expect(await run({ DATABASE_URL: 'postgres://castlog:pw@127.0.0.1:1/castlog' }, ['users', 'list'])).toEqual(
    {
      code: 1,
      stderr:
        'castlog: cannot reach PostgreSQL at 127.0.0.1:1 (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:1\n',
    },
  );
  expect(
    await run({ DATABASE_URL: process.env.DATABASE_URL, KAFKA_BROKERS: '127.0.0.1:1' }, ['projections']),
  ).toEqual({
    code: 1,
    stderr: expect.stringMatching(
      /^castlog: cannot reach Kafka at 127\.0\.0\.1:1 \(KAFKA_BROKERS\): .*ECONNREFUSED/,
    ),
  });
});

it('answers 2 when a replay cannot run, never the 1 of a difference', async () => {
  expect(
    await run({ DATABASE_URL: 'postgres://castlog:pw@127.0.0.1:1/castlog' }, ['replay', '--verify']),
  ).toEqual({
    code: 2,
    stderr:
      'castlog: cannot reach PostgreSQL at 127.0.0.1:1 (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:1\n',
  });
  expect(await castlog(['replay', '--verify', '--bogus'])).toMatchObject({
    code: 2,
    stderr: "castlog: unknown option '--bogus' (castlog --help for usage)\n",
  });
  expect((await castlog(['replay', '--help'])).code).toBe(0);
});

describe('the built program, when its output cannot be written', () => {
  const program = resolve(__dirname, '../../../dist/apps/cli/src/main.js');
  const run = (stdio: StdioOptions, onSpawn: (child: ReturnType<typeof spawn>) => void = () => {}) =>
    new Promise<{ code: number | null; stderr: string }>((done, reject) => {
      const child = spawn(process.execPath, [program, '--help'], { stdio });
      onSpawn(child);
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (code) => done({ code, stderr }));
    });

  it('stops quietly with exit code 0 when the reader has gone (a closed pipe)', async () => {
    const result = await run(['ignore', 'pipe', 'pipe'], (child) => child.stdout?.destroy());
    expect(result).toEqual({ code: 0, stderr: '' });
  });

  it('says so in one line with exit code 1 on a full disk', async () => {
    const full = openSync('/dev/full', 'w');
    try {
      const result = await run(['ignore', full, 'pipe']);
      expect(result).toEqual({
        code: 1,
        stderr: expect.stringMatching(/^castlog: cannot write the output: ENOSPC[^\n]*\n$/),
      });
    } finally {
      closeSync(full);
    }
  });
});
