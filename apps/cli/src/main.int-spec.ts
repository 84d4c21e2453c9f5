import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { AuthStore } from '@castlog/auth';
import { openAuthTestDatabase } from '../../../test/support/databases';
import { WithStore, main } from './main';

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

it('runs users add, list, tokens issue, revoke and users remove end to end', async () => {
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
  expect(missing.stderr).toContain("missing required argument 'name'");
  expect((await castlog(['users', 'rename', 'x'])).code).toBe(1);
  expect((await castlog(['tokens', 'issue', 'x', '--bogus'])).code).toBe(1);
  expect(opened).toBe(before);
});

it('prints help with exit code 0', async () => {
  const help = await castlog(['--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('users');
  expect(help.stdout).toContain('tokens');
});
