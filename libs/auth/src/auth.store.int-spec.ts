import crypto, { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, openAuthTestDatabase } from '../../../test/support/databases';
import { AuthStore, InvalidCredentialError, UserExistsError, UserNotFoundError } from './auth.store';
import { authenticate } from './credentials';
import { authMigrations } from './index';
import { AuthTables1732400000000 } from './migrations/1732400000000-auth-tables';
import { hashToken } from './token';

const HOUR = 3_600_000;
const T0 = new Date('2024-11-23T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const basic = (name: string, password: string) =>
  `Basic ${Buffer.from(`${name}:${password}`, 'utf8').toString('base64')}`;

let dataSource: DataSource;
let store: AuthStore;

/** A name no other test uses: tests share one database and never truncate it. */
const freshName = (prefix = 'user') => `${prefix}-${randomBytes(4).toString('hex')}`;

async function freshUser(password = 'correct horse battery staple') {
  const user = await store.addUser(freshName(), password);
  return { ...user, password };
}

beforeAll(async () => {
  dataSource = await openAuthTestDatabase('castlog_auth');
  store = new AuthStore(dataSource);
});

afterAll(async () => {
  await dataSource?.destroy();
});

describe('users', () => {
  it('are added, listed and removed', async () => {
    const name = freshName('alice');
    const added = await store.addUser(name, 'pw');
    expect(added).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name,
      createdAt: expect.any(Date),
      isAdmin: false,
    });

    expect(await store.listUsers()).toContainEqual(added);
    expect(await store.removeUser(name)).toBe(true);
    expect((await store.listUsers()).map((user) => user.name)).not.toContain(name);
    expect(await store.removeUser(name)).toBe(false);
  });

  it('list by name', async () => {
    const names = (await store.listUsers()).map((user) => user.name);
    expect(names).toEqual([...names].sort());
  });

  it('refuse a name that is taken, with UserExistsError', async () => {
    const { name } = await freshUser();
    const error = await store.addUser(name, 'other').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UserExistsError);
    expect(error).toMatchObject({ userName: name });
    expect((await store.listUsers()).filter((user) => user.name === name)).toHaveLength(1);
  });

  it('refuse names Basic credentials cannot carry, and empty passwords', async () => {
    await expect(store.addUser('a:b', 'pw')).rejects.toBeInstanceOf(InvalidCredentialError);
    await expect(store.addUser('a b', 'pw')).rejects.toBeInstanceOf(InvalidCredentialError);
    await expect(store.addUser('', 'pw')).rejects.toBeInstanceOf(InvalidCredentialError);
    await expect(store.addUser(freshName(), '')).rejects.toBeInstanceOf(InvalidCredentialError);
  });

  it('keep only an scrypt hash of the password', async () => {
    const user = await freshUser('plain text password');
    const [row] = await dataSource.query(`SELECT password_hash FROM castlog_auth.users WHERE id = $1`, [
      user.id,
    ]);
    expect(row.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(row.password_hash).not.toContain('plain');
  });
});

describe('administrators', () => {
  it('are added as such, listed as such, and named or unnamed by name', async () => {
    const admin = await store.addUser(freshName('admin'), 'pw', { admin: true });
    const plain = await freshUser();
    expect(admin.isAdmin).toBe(true);
    const listed = await store.listUsers();
    expect(listed).toContainEqual(admin);
    expect(listed.find((user) => user.id === plain.id)?.isAdmin).toBe(false);
    expect(await store.isAdmin(admin.id)).toBe(true);
    expect(await store.isAdmin(plain.id)).toBe(false);

    expect(await store.setAdmin(plain.name, true)).toBe(true);
    expect(await store.isAdmin(plain.id)).toBe(true);
    expect(await store.setAdmin(admin.name, false)).toBe(true);
    expect(await store.isAdmin(admin.id)).toBe(false);
    expect(await store.setAdmin(admin.name, false)).toBe(true);
  });

  it('are no one unknown', async () => {
    expect(await store.setAdmin(freshName('nobody'), true)).toBe(false);
    expect(await store.isAdmin(randomUUID())).toBe(false);
    expect(await store.isAdmin('not-a-uuid')).toBe(false);
  });
});

/** The user's sessions of both kinds, and whether each still authenticates. */
async function sessionsOf(user: { id: string; name: string }) {
  const web = await store.issueSession(user.id, HOUR, T0, 'web');
  const current = await store.issueSession(user.id, HOUR, T0, 'web');
  const gpodder = await store.issueSession(user.id, HOUR, T0);
  const app = await store.createAppPassword(user.id, 'gPodder');
  const bought = await store.issueSession(user.id, HOUR, T0, 'session', app.id);
  const cli = await store.issueToken(user.id, 'cli', HOUR, T0);
  const live = async () => ({
    web: (await store.sessionOwner(web.token, T0, 'web')) !== null,
    current: (await store.sessionOwner(current.token, T0, 'web')) !== null,
    gpodder: (await store.sessionOwner(gpodder.token, T0)) !== null,
    bought: (await store.sessionOwner(bought.token, T0)) !== null,
    app: (await store.authenticateAppPassword(user.name, app.password, T0)) !== null,
    cli: (await store.authenticateToken(cli.token, T0)) !== null,
  });
  return { current: current.token, live };
}

describe('setPassword (an administrator resets it)', () => {
  it("sets it by name or id and ends the user's web and gpodder.net sessions, not those of app passwords", async () => {
    const user = await freshUser('old password');
    const { live } = await sessionsOf(user);
    await store.setPassword(user.name, 'new password');
    expect(await store.authenticatePassword(user.name, 'old password')).toBeNull();
    expect(await store.authenticatePassword(user.name, 'new password')).toBe(user.id);
    expect(await live()).toEqual({
      web: false,
      current: false,
      gpodder: false,
      bought: true,
      app: true,
      cli: true,
    });
    await store.setPassword({ id: user.id }, 'newer password');
    expect(await store.authenticatePassword(user.name, 'newer password')).toBe(user.id);
  });

  it('refuses an unknown user and an unusable password', async () => {
    await expect(store.setPassword(freshName('nobody'), 'pw')).rejects.toBeInstanceOf(UserNotFoundError);
    await expect(store.setPassword({ id: randomUUID() }, 'pw')).rejects.toBeInstanceOf(UserNotFoundError);
    const user = await freshUser();
    await expect(store.setPassword(user.name, '')).rejects.toBeInstanceOf(InvalidCredentialError);
    await expect(store.setPassword(user.name, 'clapp_mine')).rejects.toBeInstanceOf(InvalidCredentialError);
    expect(await store.authenticatePassword(user.name, user.password)).toBe(user.id);
  });
});

describe('changePassword (the user changes its own)', () => {
  it('changes it when the current one is right, ending every other session but those of app passwords', async () => {
    const user = await freshUser('old password');
    const { current, live } = await sessionsOf(user);
    expect(await store.changePassword(user.id, 'old password', 'new password', current)).toBe(true);
    expect(await store.authenticatePassword(user.name, 'old password')).toBeNull();
    expect(await store.authenticatePassword(user.name, 'new password')).toBe(user.id);
    expect(await live()).toEqual({
      web: false,
      current: true,
      gpodder: false,
      bought: true,
      app: true,
      cli: true,
    });
  });

  it('ends every web session without one to keep', async () => {
    const user = await freshUser('old password');
    const { live } = await sessionsOf(user);
    expect(await store.changePassword(user.id, 'old password', 'new password')).toBe(true);
    expect(await live()).toMatchObject({ web: false, current: false, gpodder: false });
  });

  it('answers false for a wrong current password or an unknown user, changing nothing', async () => {
    const user = await freshUser('old password');
    const { current, live } = await sessionsOf(user);
    expect(await store.changePassword(user.id, 'wrong', 'new password', current)).toBe(false);
    expect(await store.changePassword(randomUUID(), 'old password', 'new password')).toBe(false);
    expect(await store.changePassword('not-a-uuid', 'old password', 'new password')).toBe(false);
    expect(await store.authenticatePassword(user.name, 'old password')).toBe(user.id);
    expect(await live()).toEqual({
      web: true,
      current: true,
      gpodder: true,
      bought: true,
      app: true,
      cli: true,
    });
    await expect(store.changePassword(user.id, 'old password', '')).rejects.toBeInstanceOf(
      InvalidCredentialError,
    );
  });

  it('is announced as a change of the user, which every process forgets verified passwords on', async () => {
    const user = await freshUser('old password');
    const listener = new Client({ connectionString: (dataSource.options as { url: string }).url });
    await listener.connect();
    try {
      const notices: string[] = [];
      listener.on('notification', (notice) => notices.push(notice.payload ?? ''));
      await listener.query('LISTEN castlog_tokens');
      expect(await store.changePassword(user.id, 'old password', 'new password')).toBe(true);
      await listener.query('SELECT 1');
      expect(notices).toContain(`user:${user.id}`);
    } finally {
      await listener.end();
    }
  });
});

describe('passwords', () => {
  it('authenticate the right one only', async () => {
    const user = await freshUser('pa:ss wörd');
    expect(await store.authenticatePassword(user.name, 'pa:ss wörd')).toBe(user.id);
    expect(await store.authenticatePassword(user.name, 'pa:ss word')).toBeNull();
    expect(await store.authenticatePassword(user.name, '')).toBeNull();
  });

  it('answer null for an unknown user, after running scrypt all the same', async () => {
    const known = await freshUser();
    const scrypt = jest.spyOn(crypto, 'scrypt');
    try {
      expect(await store.authenticatePassword(known.name, 'wrong')).toBeNull();
      expect(await store.authenticatePassword(freshName('nobody'), 'wrong')).toBeNull();
      // The same work for both: one scrypt of the password at the stored hashes' cost.
      const [forKnown, forUnknown] = scrypt.mock.calls.map(([password, , keyLength, options]) => ({
        password: String(password),
        keyLength,
        options: { N: options.N, r: options.r, p: options.p },
      }));
      expect(scrypt).toHaveBeenCalledTimes(2);
      expect(forKnown).toEqual({ password: 'wrong', keyLength: 32, options: { N: 2 ** 15, r: 8, p: 1 } });
      expect(forUnknown).toEqual(forKnown);
    } finally {
      scrypt.mockRestore();
    }
  });
});

describe('tokens', () => {
  it('authenticate their user until they expire', async () => {
    const user = await freshUser();
    const issued = await store.issueToken(user.name, 'cli', HOUR, T0);
    expect(issued).toEqual({
      id: expect.any(String),
      token: expect.stringMatching(/^cl_/),
      expiresAt: at(HOUR),
    });

    expect(await store.authenticateToken(issued.token, T0)).toBe(user.id);
    expect(await store.authenticateToken(issued.token, at(HOUR - 1))).toBe(user.id);
    expect(await store.authenticateToken(issued.token, at(HOUR))).toBeNull();
  });

  it('are stored as SHA-256 hashes only', async () => {
    const user = await freshUser();
    const issued = await store.issueToken(user.name, 'access', HOUR);
    const rows = await dataSource.query(`SELECT * FROM castlog_auth.tokens WHERE id = $1`, [issued.id]);
    expect(rows).toEqual([expect.objectContaining({ token_hash: hashToken(issued.token), kind: 'access' })]);
    expect(JSON.stringify(rows)).not.toContain(issued.token);
  });

  it('are issued by user name or id', async () => {
    const user = await freshUser();
    for (const ref of [user.name, user.id, { id: user.id }, { name: user.name }]) {
      const { token } = await store.issueToken(ref, 'access', HOUR, T0);
      expect(await store.authenticateToken(token, T0)).toBe(user.id);
    }
  });

  it('prefer the user with that id when a bare string is both an id and a name', async () => {
    const owner = await freshUser();
    const impostor = await store.addUser(owner.id, 'pw');
    const { token } = await store.issueToken(owner.id, 'cli', HOUR, T0);
    expect(await store.authenticateToken(token, T0)).toBe(owner.id);
    const { token: byName } = await store.issueToken({ name: owner.id }, 'cli', HOUR, T0);
    expect(await store.authenticateToken(byName, T0)).toBe(impostor.id);
  });

  it('are not issued for an unknown user', async () => {
    await expect(store.issueToken(freshName('nobody'), 'cli', HOUR)).rejects.toBeInstanceOf(
      UserNotFoundError,
    );
    await expect(store.issueToken(randomUUID(), 'cli', HOUR)).rejects.toBeInstanceOf(UserNotFoundError);
    await expect(store.issueToken({ id: 'not-a-uuid' }, 'cli', HOUR)).rejects.toBeInstanceOf(
      UserNotFoundError,
    );
  });

  it('need a positive lifetime', async () => {
    const user = await freshUser();
    await expect(store.issueToken(user.name, 'cli', 0)).rejects.toBeInstanceOf(RangeError);
  });

  it('stop working when revoked by text, and revoking again still answers true', async () => {
    const user = await freshUser();
    const issued = await store.issueToken(user.name, 'cli', HOUR, T0);
    expect(await store.revokeToken(issued.token, T0)).toBe(true);
    expect(await store.authenticateToken(issued.token, T0)).toBeNull();
    expect(await store.revokeToken(issued.token, at(1))).toBe(true);
    const [row] = await dataSource.query(`SELECT revoked_at FROM castlog_auth.tokens WHERE id = $1`, [
      issued.id,
    ]);
    expect(row.revoked_at).toEqual(T0);
  });

  it('stop working when revoked by id, and only that one', async () => {
    const user = await freshUser();
    const revoked = await store.issueToken(user.name, 'cli', HOUR, T0);
    const kept = await store.issueToken(user.name, 'cli', HOUR, T0);
    expect(await store.revokeToken(revoked.id)).toBe(true);
    expect(await store.authenticateToken(revoked.token, T0)).toBeNull();
    expect(await store.authenticateToken(kept.token, T0)).toBe(user.id);
  });

  it('answer false when revoking a token that does not exist', async () => {
    expect(await store.revokeToken(randomUUID())).toBe(false);
    expect(await store.revokeToken('cl_' + 'x'.repeat(43))).toBe(false);
    expect(await store.revokeToken('anything')).toBe(false);
  });

  it('do not authenticate unknown or malformed tokens', async () => {
    expect(await store.authenticateToken('cl_' + 'x'.repeat(43), T0)).toBeNull();
    expect(await store.authenticateToken('', T0)).toBeNull();
    expect(await store.authenticateToken("' OR 1=1 --", T0)).toBeNull();
  });

  it('of kind refresh do not authenticate API requests', async () => {
    const user = await freshUser();
    const refresh = await store.issueToken(user.name, 'refresh', HOUR, T0);
    expect(await store.authenticateToken(refresh.token, T0)).toBeNull();
  });

  it('go with their user when it is removed (cascade)', async () => {
    const user = await freshUser();
    const issued = await store.issueToken(user.name, 'cli', HOUR, T0);
    expect(await store.removeUser(user.name)).toBe(true);
    expect(await store.authenticateToken(issued.token, T0)).toBeNull();
    const rows = await dataSource.query(`SELECT id FROM castlog_auth.tokens WHERE user_id = $1`, [user.id]);
    expect(rows).toEqual([]);
  });
});

describe('login', () => {
  it('answers a bearer access token and a refresh token for the right password', async () => {
    const user = await freshUser();
    const tokens = await store.login(user.name, user.password, HOUR, 30 * 24 * HOUR, T0);
    expect(tokens).toEqual({
      access_token: expect.stringMatching(/^cl_[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^cl_[A-Za-z0-9_-]{43}$/),
    });
    expect(await store.authenticateToken(tokens!.access_token, at(HOUR - 1))).toBe(user.id);
    expect(await store.authenticateToken(tokens!.access_token, at(HOUR))).toBeNull();
  });

  it('answers null for a wrong password or an unknown user', async () => {
    const user = await freshUser();
    expect(await store.login(user.name, 'wrong', HOUR, HOUR)).toBeNull();
    expect(await store.login(freshName('nobody'), user.password, HOUR, HOUR)).toBeNull();
  });
});

describe('refresh', () => {
  it('rotates: new tokens work, the used refresh token does not work twice', async () => {
    const user = await freshUser();
    const first = (await store.login(user.name, user.password, HOUR, 24 * HOUR, T0))!;
    const second = await store.refresh(first.refresh_token, HOUR, 24 * HOUR, at(1000));
    expect(second).toEqual({
      access_token: expect.stringMatching(/^cl_/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^cl_/),
    });
    expect(second!.refresh_token).not.toBe(first.refresh_token);
    expect(await store.authenticateToken(second!.access_token, at(1000))).toBe(user.id);
    expect(await store.refresh(first.refresh_token, HOUR, 24 * HOUR, at(2000))).toBeNull();
    expect(await store.refresh(second!.refresh_token, HOUR, 24 * HOUR, at(2000))).not.toBeNull();
  });

  it('lets exactly one of two concurrent uses of one refresh token win', async () => {
    const user = await freshUser();
    const { refresh_token } = (await store.login(user.name, user.password, HOUR, HOUR, T0))!;
    const results = await Promise.all([
      store.refresh(refresh_token, HOUR, HOUR, at(1)),
      store.refresh(refresh_token, HOUR, HOUR, at(1)),
    ]);
    expect(results.filter((result) => result !== null)).toHaveLength(1);
  });

  it('refuses an expired or revoked refresh token, an access token, and garbage', async () => {
    const user = await freshUser();
    const tokens = (await store.login(user.name, user.password, HOUR, 2 * HOUR, T0))!;
    expect(await store.refresh(tokens.refresh_token, HOUR, HOUR, at(2 * HOUR))).toBeNull();
    expect(await store.refresh(tokens.access_token, HOUR, HOUR, T0)).toBeNull();
    expect(await store.refresh('garbage', HOUR, HOUR, T0)).toBeNull();

    const other = (await store.login(user.name, user.password, HOUR, 2 * HOUR, T0))!;
    expect(await store.revokeToken(other.refresh_token)).toBe(true);
    expect(await store.refresh(other.refresh_token, HOUR, HOUR, T0)).toBeNull();
  });
});

describe('issueLogin and refreshAccess (the sync draft)', () => {
  it('answers when the refresh token expires, and buys access tokens with it without using it up', async () => {
    const user = await freshUser();
    const issued = (await store.issueLogin(user.name, user.password, HOUR, 24 * HOUR, T0))!;
    expect(issued.refreshExpiresAt).toEqual(at(24 * HOUR));
    const { refresh_token } = issued.tokens;
    const first = await store.refreshAccess(refresh_token, HOUR, at(1000));
    const second = await store.refreshAccess(refresh_token, 2 * HOUR, at(2000));
    expect(first).toEqual({
      access_token: expect.stringMatching(/^cl_[A-Za-z0-9_-]{43}$/),
      expires_in: 3600,
    });
    expect(second).toEqual({ access_token: expect.stringMatching(/^cl_/), expires_in: 7200 });
    expect(second!.access_token).not.toBe(first!.access_token);
    expect(await store.authenticateToken(first!.access_token, at(1000))).toBe(user.id);
    expect(await store.authenticateToken(first!.access_token, at(HOUR + 1000))).toBeNull();
    expect(await store.authenticateToken(second!.access_token, at(HOUR + 1000))).toBe(user.id);
    expect(await store.authenticateToken(refresh_token, at(1000))).toBeNull();
  });

  it('refuses an expired or revoked refresh token, an access or CLI token, and garbage', async () => {
    const user = await freshUser();
    const { tokens } = (await store.issueLogin(user.name, user.password, HOUR, 2 * HOUR, T0))!;
    expect(await store.refreshAccess(tokens.refresh_token, HOUR, at(2 * HOUR - 1))).not.toBeNull();
    expect(await store.refreshAccess(tokens.refresh_token, HOUR, at(2 * HOUR))).toBeNull();
    expect(await store.refreshAccess(tokens.access_token, HOUR, T0)).toBeNull();
    const cli = await store.issueToken(user.name, 'cli', HOUR, T0);
    expect(await store.refreshAccess(cli.token, HOUR, T0)).toBeNull();
    expect(await store.refreshAccess('garbage', HOUR, T0)).toBeNull();
    const other = (await store.issueLogin(user.name, user.password, HOUR, 2 * HOUR, T0))!;
    expect(await store.revokeToken(other.tokens.refresh_token)).toBe(true);
    expect(await store.refreshAccess(other.tokens.refresh_token, HOUR, T0)).toBeNull();
  });

  it('answers null for a wrong password, as login does', async () => {
    const user = await freshUser();
    expect(await store.issueLogin(user.name, 'wrong', HOUR, HOUR)).toBeNull();
  });
});

describe('authenticate (Authorization header)', () => {
  it('accepts a bearer token and basic credentials', async () => {
    const user = await freshUser('with:colons');
    const { token } = await store.issueToken(user.name, 'cli', HOUR, T0);
    expect(await authenticate(store, `Bearer ${token}`, T0)).toBe(user.id);
    expect(await authenticate(store, basic(user.name, 'with:colons'), T0)).toBe(user.id);
  });

  it('refuses wrong, expired and malformed credentials', async () => {
    const user = await freshUser();
    const { token } = await store.issueToken(user.name, 'cli', HOUR, T0);
    expect(await authenticate(store, `Bearer ${token}`, at(HOUR))).toBeNull();
    expect(await authenticate(store, basic(user.name, 'wrong'), T0)).toBeNull();
    expect(await authenticate(store, `Bearer ${token} extra`, T0)).toBeNull();
    expect(await authenticate(store, `Token ${token}`, T0)).toBeNull();
    expect(await authenticate(store, 'Basic !!!', T0)).toBeNull();
    expect(await authenticate(store, undefined, T0)).toBeNull();
  });
});

describe('migration AuthTables1732400000000', () => {
  it('enforces the token kinds', async () => {
    const user = await freshUser();
    await expect(
      dataSource.query(
        `INSERT INTO castlog_auth.tokens (user_id, token_hash, kind, expires_at) VALUES ($1, 'h', 'other', now())`,
        [user.id],
      ),
    ).rejects.toThrow(/tokens_kind_check/);
  });

  it('lets AppPasswordForms1732400000017 and WebAccounts1732400000015 be reverted and run again', async () => {
    const other = new DataSource({
      type: 'postgres',
      url: await createTestDatabase('castlog_auth_web_down'),
      migrations: authMigrations,
      migrationsRun: true,
    });
    await other.initialize();
    try {
      const otherStore = new AuthStore(other);
      const user = await otherStore.addUser('someone', 'pw', { admin: true });
      await otherStore.createAppPassword(user.id, 'x', '6f9619ff-8b86-4011-b42d-00cf4fc964ff');
      await otherStore.issueSession(user.id, HOUR, T0, 'web');
      await other.undoLastMigration();
      expect(
        await other.query(
          `SELECT column_name FROM information_schema.columns
            WHERE table_schema = 'castlog_auth' AND table_name = 'app_passwords' AND column_name = 'form_id'`,
        ),
      ).toEqual([]);
      await other.undoLastMigration();
      const [row] = await other.query(
        `SELECT to_regclass('castlog_auth.app_passwords') AS app_passwords, to_regclass('castlog_auth.hash_keys') AS keys`,
      );
      expect(row).toEqual({ app_passwords: null, keys: null });
      await other.runMigrations();
      expect((await otherStore.listUsers())[0]?.isAdmin).toBe(false);
    } finally {
      await other.destroy();
    }
  });

  it('drops what it created when reverted', async () => {
    const other = new DataSource({
      type: 'postgres',
      url: await createTestDatabase('castlog_auth_down'),
      migrations: [AuthTables1732400000000],
      migrationsRun: true,
    });
    await other.initialize();
    try {
      await other.undoLastMigration();
      const [row] = await other.query(`SELECT to_regnamespace('castlog_auth') AS schema`);
      expect(row.schema).toBeNull();
    } finally {
      await other.destroy();
    }
  });
});
