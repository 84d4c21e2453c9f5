import crypto, { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { openAuthTestDatabase } from '../../../test/support/databases';
import { MAX_APP_PASSWORDS_PER_USER } from './app-password';
import {
  AppPasswordAlreadyCreatedError,
  AuthStore,
  InvalidCredentialError,
  UserNotFoundError,
} from './auth.store';

const T0 = new Date('2024-11-23T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const HOUR = 3_600_000;

let dataSource: DataSource;
let store: AuthStore;

/** Users never shared between tests: the tests share one database and never truncate it. */
const freshUser = () => store.addUser(`apppw-${randomBytes(4).toString('hex')}`, 'main password');

const rowOf = async (id: string) =>
  (await dataSource.query(`SELECT * FROM castlog_auth.app_passwords WHERE id = $1`, [id]))[0];

beforeAll(async () => {
  dataSource = await openAuthTestDatabase('castlog_auth_app_passwords');
  store = new AuthStore(dataSource);
});

afterAll(async () => {
  await dataSource?.destroy();
});

describe('app passwords', () => {
  it('are random secrets with a recognisable prefix, answered once and stored as an HMAC under the installation key', async () => {
    const user = await freshUser();
    const created = await store.createAppPassword(user.id, '  Kasts on my phone ');
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Kasts on my phone',
      password: expect.stringMatching(/^clapp_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.any(Date),
    });
    const row = await rowOf(created.id);
    const [{ key }] = await dataSource.query(
      `SELECT key FROM castlog_auth.hash_keys WHERE name = 'app_passwords'`,
    );
    expect(key).toHaveLength(32);
    expect(row.secret_hash).toBe(createHmac('sha256', key).update(created.password).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(created.password.slice('clapp_'.length));
    expect((await store.createAppPassword(user.id, 'other')).password).not.toBe(created.password);
  });

  it('are created once per form: the same form sent again creates nothing and names what it created', async () => {
    const user = await freshUser();
    const other = await freshUser();
    const form = randomUUID();
    const created = await store.createAppPassword(user.id, 'AntennaPod', form);
    await expect(store.createAppPassword(user.id, 'AntennaPod', form)).rejects.toEqual(
      new AppPasswordAlreadyCreatedError('AntennaPod'),
    );
    await expect(store.createAppPassword(user.id, 'Kasts', form)).rejects.toBeInstanceOf(
      AppPasswordAlreadyCreatedError,
    );
    expect((await store.listAppPasswords(user.id)).map((entry) => entry.id)).toEqual([created.id]);
    // Another form, or another user's form with the same id, creates as usual.
    await store.createAppPassword(user.id, 'AntennaPod', randomUUID());
    await store.createAppPassword(other.id, 'AntennaPod', form);
    expect(await store.listAppPasswords(user.id)).toHaveLength(2);
    await expect(store.createAppPassword(user.id, 'x', 'not-a-uuid')).rejects.toBeInstanceOf(
      InvalidCredentialError,
    );
  });

  it('authenticate their user by name, without scrypt, and nobody else', async () => {
    const user = await freshUser();
    const other = await freshUser();
    const { password } = await store.createAppPassword(user.id, 'gPodder');
    const scrypt = jest.spyOn(crypto, 'scrypt');
    try {
      expect(await store.authenticateAppPassword(user.name, password, T0)).toBe(user.id);
      expect(await store.authenticateAppPassword(other.name, password, T0)).toBeNull();
      expect(await store.authenticateAppPassword(user.name, `${password.slice(0, -1)}A`, T0)).toBeNull();
      expect(await store.authenticateAppPassword(user.name, 'clapp_short', T0)).toBeNull();
      expect(await store.authenticateAppPassword(user.name, 'main password', T0)).toBeNull();
      expect(scrypt).not.toHaveBeenCalled();
    } finally {
      scrypt.mockRestore();
    }
    // The main password is no app password, nor is an app password the main password.
    expect(await store.authenticatePassword(user.name, 'main password')).toBe(user.id);
    expect(await store.authenticatePassword(user.name, password)).toBeNull();
    // Nor is it a Bearer token.
    expect(await store.authenticateToken(password, T0)).toBeNull();
  });

  it('record their last use at most once a minute', async () => {
    const user = await freshUser();
    const { id, password } = await store.createAppPassword(user.id, 'Kasts');
    expect((await store.listAppPasswords(user.id))[0]?.lastUsedAt).toBeNull();
    const lastUsed = async () => (await rowOf(id)).last_used_at;
    await store.authenticateAppPassword(user.name, password, T0);
    expect(await lastUsed()).toEqual(T0);
    await store.authenticateAppPassword(user.name, password, at(59_999));
    expect(await lastUsed()).toEqual(T0);
    await store.authenticateAppPassword(user.name, password, at(60_000));
    expect(await lastUsed()).toEqual(at(60_000));
    // A replica whose clock is behind never moves it back.
    await store.authenticateAppPassword(user.name, password, at(-HOUR));
    expect(await lastUsed()).toEqual(at(60_000));
    expect((await store.listAppPasswords(user.id))[0]?.lastUsedAt).toEqual(at(60_000));
  });

  it('are listed live ones only, newest first, without secrets', async () => {
    const user = await freshUser();
    const first = await store.createAppPassword(user.id, 'first');
    const second = await store.createAppPassword(user.id, 'second');
    const third = await store.createAppPassword(user.id, 'third');
    expect(await store.revokeAppPassword(user.id, second.id)).toBe(true);
    const listed = await store.listAppPasswords(user.id);
    expect(listed).toEqual([
      { id: third.id, name: 'third', createdAt: third.createdAt, lastUsedAt: null },
      { id: first.id, name: 'first', createdAt: first.createdAt, lastUsedAt: null },
    ]);
    expect(await store.listAppPasswords((await freshUser()).id)).toEqual([]);
    expect(await store.listAppPasswords('not-a-uuid')).toEqual([]);
  });

  it('stop working when revoked, only by their owner, and only that one', async () => {
    const user = await freshUser();
    const other = await freshUser();
    const revoked = await store.createAppPassword(user.id, 'lost phone');
    const kept = await store.createAppPassword(user.id, 'laptop');
    expect(await store.revokeAppPassword(other.id, revoked.id)).toBe(false);
    expect(await store.authenticateAppPassword(user.name, revoked.password)).toBe(user.id);
    expect(await store.revokeAppPassword(user.id, revoked.id)).toBe(true);
    expect(await store.authenticateAppPassword(user.name, revoked.password)).toBeNull();
    expect(await store.authenticateAppPassword(user.name, kept.password)).toBe(user.id);
    expect(await store.revokeAppPassword(user.id, revoked.id)).toBe(false);
    expect(await store.revokeAppPassword(user.id, randomUUID())).toBe(false);
    expect(await store.revokeAppPassword(user.id, 'not-a-uuid')).toBe(false);
  });

  it('end the gpodder.net sessions they bought when revoked, and those only', async () => {
    const user = await freshUser();
    const app = await store.createAppPassword(user.id, 'gPodder');
    const bought = await store.issueSession(user.id, HOUR, T0, 'session', app.id);
    const own = await store.issueSession(user.id, HOUR, T0);
    expect(await store.sessionOwner(bought.token, T0)).not.toBeNull();
    expect(await store.revokeAppPassword(user.id, app.id)).toBe(true);
    expect(await store.sessionOwner(bought.token, T0)).toBeNull();
    expect(await store.sessionOwner(own.token, T0)).not.toBeNull();
    expect(await dataSource.query(`SELECT id FROM castlog_auth.tokens WHERE id = $1`, [bought.id])).toEqual(
      [],
    );
  });

  it('buy no session once revoked, and a session that slipped past a revocation is refused', async () => {
    const user = await freshUser();
    const app = await store.createAppPassword(user.id, 'gPodder');
    const slipped = await store.issueSession(user.id, HOUR, T0, 'session', app.id);
    await dataSource.query(`UPDATE castlog_auth.app_passwords SET revoked_at = now() WHERE id = $1`, [
      app.id,
    ]);
    expect(await store.sessionOwner(slipped.token, T0)).toBeNull();
    await expect(store.issueSession(user.id, HOUR, T0, 'session', app.id)).rejects.toBeInstanceOf(
      UserNotFoundError,
    );
    const another = await store.createAppPassword((await freshUser()).id, 'not yours');
    await expect(store.issueSession(user.id, HOUR, T0, 'session', another.id)).rejects.toBeInstanceOf(
      UserNotFoundError,
    );
  });

  it('refuse names that are empty, too long or hold control characters', async () => {
    const user = await freshUser();
    for (const name of ['', '   ', 'x'.repeat(101), 'tab\there', 'new\nline'])
      await expect(store.createAppPassword(user.id, name)).rejects.toBeInstanceOf(InvalidCredentialError);
    expect((await store.createAppPassword(user.id, 'ü'.repeat(100))).name).toBe('ü'.repeat(100));
    await expect(store.createAppPassword(randomUUID(), 'x')).rejects.toBeInstanceOf(UserNotFoundError);
    await expect(store.createAppPassword('not-a-uuid', 'x')).rejects.toBeInstanceOf(UserNotFoundError);
  });

  it(`are at most ${MAX_APP_PASSWORDS_PER_USER} live per user, even created at once`, async () => {
    const user = await freshUser();
    const results = await Promise.allSettled(
      Array.from({ length: MAX_APP_PASSWORDS_PER_USER + 5 }, (_, i) =>
        store.createAppPassword(user.id, `app ${i}`),
      ),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(
      MAX_APP_PASSWORDS_PER_USER,
    );
    const refused = results.find((result) => result.status === 'rejected');
    expect(refused?.reason).toBeInstanceOf(InvalidCredentialError);
    expect(refused?.reason.message).toBe(
      `at most ${MAX_APP_PASSWORDS_PER_USER} app passwords per user: revoke one before creating another`,
    );
    const [oldest] = (await store.listAppPasswords(user.id)).slice(-1);
    expect(await store.revokeAppPassword(user.id, oldest!.id)).toBe(true);
    expect((await store.createAppPassword(user.id, 'one more')).name).toBe('one more');
  });

  it('keep the 50 most recently revoked of a user, sweeping older ones on creation', async () => {
    const user = await freshUser();
    const count = async () =>
      Number(
        (
          await dataSource.query(
            `SELECT count(*) AS n FROM castlog_auth.app_passwords WHERE user_id = $1 AND revoked_at IS NOT NULL`,
            [user.id],
          )
        )[0].n,
      );
    for (let i = 0; i < 60; i += 1) {
      const { id } = await store.createAppPassword(user.id, `round ${i}`);
      await store.revokeAppPassword(user.id, id);
    }
    expect(await count()).toBe(51);
    await store.createAppPassword(user.id, 'live');
    expect(await count()).toBe(50);
  });

  it('go with their user', async () => {
    const user = await freshUser();
    const { id, password } = await store.createAppPassword(user.id, 'x');
    expect(await store.removeUser(user.name)).toBe(true);
    expect(await store.authenticateAppPassword(user.name, password)).toBeNull();
    expect(await rowOf(id)).toBeUndefined();
  });

  it('are announced as a change of their user when revoked or deleted, not when used', async () => {
    const user = await freshUser();
    const { id, password } = await store.createAppPassword(user.id, 'x');
    const listener = new Client({ connectionString: (dataSource.options as { url: string }).url });
    await listener.connect();
    try {
      const notices: string[] = [];
      listener.on('notification', (notice) => notices.push(notice.payload ?? ''));
      await listener.query('LISTEN castlog_tokens');
      await store.authenticateAppPassword(user.name, password, T0);
      await store.revokeAppPassword(user.id, id);
      await dataSource.query(`DELETE FROM castlog_auth.app_passwords WHERE id = $1`, [id]);
      await listener.query('SELECT 1');
      expect(notices).toEqual([`user:${user.id}`, `user:${user.id}`]);
    } finally {
      await listener.end();
    }
  });
});
