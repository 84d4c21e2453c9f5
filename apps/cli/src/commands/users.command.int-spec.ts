import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { AuthStore } from '@castlog/auth';
import { openAuthTestDatabase } from '../../../../test/support/databases';
import { CommandIo } from './command-io';
import { tokensIssue, tokensRevoke } from './tokens.command';
import { usersAdd, usersAdmin, usersList, usersRemove } from './users.command';

const DAY = 86_400_000;

let dataSource: DataSource;
let store: AuthStore;

beforeAll(async () => {
  dataSource = await openAuthTestDatabase('castlog_cli');
  store = new AuthStore(dataSource);
});

afterAll(async () => {
  await dataSource?.destroy();
});

const freshName = (prefix = 'user') => `${prefix}-${randomBytes(4).toString('hex')}`;

/** stdout and stderr collected as text; stdin a pipe holding `input` (not a terminal). */
function io(input = '') {
  const stdout = { text: '', write: (chunk: string) => (stdout.text += chunk) };
  const stderr = { text: '', write: (chunk: string) => (stderr.text += chunk) };
  const stdin = Readable.from([Buffer.from(input, 'utf8')]);
  return { stdout, stderr, stdin } satisfies CommandIo;
}

const users = (input = '') => ({ ...io(input), store });
const tokens = () => ({ ...io(), store, defaultTtlMs: 365 * DAY });

async function addedUser(password = 'pw') {
  const name = freshName();
  expect(await usersAdd(users(`${password}\n`), name)).toBe(0);
  return name;
}

describe('users add', () => {
  it('reads the password from stdin, less one trailing newline', async () => {
    const name = freshName('alice');
    const deps = users('s3cret: with spaces\n');
    expect(await usersAdd(deps, name)).toBe(0);
    expect(deps.stdout.text).toBe(`Added user ${name}\n`);
    expect(deps.stderr.text).toBe('');
    expect(await store.authenticatePassword(name, 's3cret: with spaces')).not.toBeNull();
    expect(await store.authenticatePassword(name, 's3cret: with spaces\n')).toBeNull();
  });

  it('strips only one newline (and a CR before it)', async () => {
    const name = freshName();
    expect(await usersAdd(users('pw\n\r\n'), name)).toBe(0);
    expect(await store.authenticatePassword(name, 'pw\n')).not.toBeNull();
  });

  it('takes a password without a trailing newline as it is', async () => {
    const name = freshName();
    expect(await usersAdd(users('pw'), name)).toBe(0);
    expect(await store.authenticatePassword(name, 'pw')).not.toBeNull();
  });

  it('refuses an existing name with exit code 1 and one line on stderr', async () => {
    const name = await addedUser('first');
    const deps = users('second\n');
    expect(await usersAdd(deps, name)).toBe(1);
    expect(deps.stdout.text).toBe('');
    expect(deps.stderr.text).toBe(`castlog: user ${name} already exists\n`);
    expect(await store.authenticatePassword(name, 'first')).not.toBeNull();
  });

  it('refuses an empty password and an unusable name', async () => {
    const empty = users('');
    expect(await usersAdd(empty, freshName())).toBe(1);
    expect(empty.stderr.text).toBe('castlog: no password on stdin\n');

    const newlineOnly = users('\n');
    expect(await usersAdd(newlineOnly, freshName())).toBe(1);
    expect(newlineOnly.stderr.text).toBe('castlog: password must not be empty\n');

    const colon = users('pw\n');
    expect(await usersAdd(colon, 'a:b')).toBe(1);
    expect(colon.stderr.text).toMatch(/^castlog: user name must be .*\n$/);
    expect(colon.stderr.text.split('\n')).toHaveLength(2);
  });
});

describe('users add --admin', () => {
  it('adds an administrator and says so', async () => {
    const name = freshName('admin');
    const deps = users('pw\n');
    expect(await usersAdd(deps, name, { admin: true })).toBe(0);
    expect(deps.stdout.text).toBe(`Added user ${name}, an administrator\n`);
    const id = (await store.authenticatePassword(name, 'pw'))!;
    expect(await store.isAdmin(id)).toBe(true);
  });
});

describe('users admin', () => {
  it('makes a user an administrator, and with --off no longer, saying what it did', async () => {
    const name = await addedUser();
    const id = (await store.authenticatePassword(name, 'pw'))!;
    expect(await store.isAdmin(id)).toBe(false);
    const on = users();
    expect(await usersAdmin(on, name)).toBe(0);
    expect(on.stdout.text).toBe(`User ${name} is an administrator\n`);
    expect(await store.isAdmin(id)).toBe(true);
    const off = users();
    expect(await usersAdmin(off, name, { off: true })).toBe(0);
    expect(off.stdout.text).toBe(`User ${name} is no longer an administrator\n`);
    expect(await store.isAdmin(id)).toBe(false);
  });

  it('says when there is no such user', async () => {
    const nobody = freshName('nobody');
    const deps = users();
    expect(await usersAdmin(deps, nobody)).toBe(1);
    expect(deps.stdout.text).toBe('');
    expect(deps.stderr.text).toBe(`castlog: no user ${nobody}\n`);
  });
});

describe('users list', () => {
  it('prints name and creation time, one user a line, and admin for an administrator', async () => {
    const name = await addedUser();
    const admin = await addedUser();
    await store.setAdmin(admin, true);
    const deps = users();
    expect(await usersList(deps)).toBe(0);
    const time = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';
    const lines = deps.stdout.text.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${name}\\t${time}$`)));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${admin}\\t${time}\\tadmin$`)));
  });
});

describe('users remove', () => {
  it('removes the user, then says there is none', async () => {
    const name = await addedUser();
    const first = users();
    expect(await usersRemove(first, name)).toBe(0);
    expect(first.stdout.text).toBe(`Removed user ${name}\n`);
    expect(await store.authenticatePassword(name, 'pw')).toBeNull();

    const second = users();
    expect(await usersRemove(second, name)).toBe(1);
    expect(second.stderr.text).toBe(`castlog: no user ${name}\n`);
  });
});

describe('tokens issue', () => {
  it('prints only the token, on one line of stdout', async () => {
    const name = await addedUser();
    const deps = tokens();
    expect(await tokensIssue(deps, name)).toBe(0);
    expect(deps.stdout.text).toMatch(/^cl_[A-Za-z0-9_-]{43}\n$/);
    const userId = await store.authenticateToken(deps.stdout.text.trim());
    expect(userId).not.toBeNull();
    expect(userId).toBe(await store.authenticatePassword(name, 'pw'));
  });

  it('uses the default lifetime, or --ttl', async () => {
    const name = await addedUser();
    const lifetime = async (ttl?: string) => {
      const deps = tokens();
      expect(await tokensIssue(deps, name, { ttl })).toBe(0);
      const [row] = await dataSource.query(
        `SELECT kind, extract(epoch FROM expires_at - created_at) * 1000 AS ms FROM castlog_auth.tokens WHERE token_hash = encode(sha256($1::bytea), 'hex')`,
        [deps.stdout.text.trim()],
      );
      expect(row.kind).toBe('cli');
      return Number(row.ms);
    };
    expect(await lifetime()).toBe(365 * DAY);
    expect(await lifetime('90m')).toBe(90 * 60_000);
    expect(await lifetime('12h')).toBe(12 * 3_600_000);
  });

  it('refuses a bad --ttl and an unknown user, printing nothing on stdout', async () => {
    const name = await addedUser();
    for (const ttl of ['soon', '0', '-1d']) {
      const deps = tokens();
      expect(await tokensIssue(deps, name, { ttl })).toBe(1);
      expect(deps.stdout.text).toBe('');
      expect(deps.stderr.text).toMatch(/^castlog: --ttl must be .*\n$/);
    }
    const nobody = freshName('nobody');
    const deps = tokens();
    expect(await tokensIssue(deps, nobody)).toBe(1);
    expect(deps.stdout.text).toBe('');
    expect(deps.stderr.text).toBe(`castlog: no user ${nobody}\n`);
  });
});

describe('tokens revoke', () => {
  it('revokes by token text and by id', async () => {
    const name = await addedUser();
    const byText = await store.issueToken(name, 'cli', DAY);
    const byId = await store.issueToken(name, 'cli', DAY);

    const first = tokens();
    expect(await tokensRevoke(first, byText.token)).toBe(0);
    expect(first.stdout.text).toBe('Revoked token\n');
    expect(await tokensRevoke(tokens(), byId.id)).toBe(0);

    expect(await store.authenticateToken(byText.token)).toBeNull();
    expect(await store.authenticateToken(byId.token)).toBeNull();
  });

  it('says when there is no such token', async () => {
    const deps = tokens();
    expect(await tokensRevoke(deps, 'cl_' + 'x'.repeat(43))).toBe(1);
    expect(deps.stderr.text).toBe('castlog: no such token\n');
  });
});
