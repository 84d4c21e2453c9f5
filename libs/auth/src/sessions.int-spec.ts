import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { openAuthTestDatabase } from '../../../test/support/databases';
import { AuthStore, MAX_SESSIONS_PER_USER, SESSION_TTL_MS, UserNotFoundError } from './auth.store';
import { hashToken } from './token';

const HOUR = 3_600_000;
const T0 = new Date('2024-11-23T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

let dataSource: DataSource;
let store: AuthStore;

/** Users never shared between tests: the tests share one database and never truncate it. */
const freshUser = () => store.addUser(`session-${randomBytes(4).toString('hex')}`, 'pw');

/** Sessions stored for the user (live or not). */
const sessionsOf = async (userId: string): Promise<{ token_hash: string; expires_at: Date }[]> =>
  dataSource.query(
    `SELECT token_hash, expires_at FROM castlog_auth.tokens
      WHERE user_id = $1 AND kind = 'session' ORDER BY created_at, id`,
    [userId],
  );

/** Sessions `count` rows at once (created one second apart from `createdAt`), without the sweep
 * that issueSession runs. */
async function insertSessions(userId: string, count: number, createdAt: Date, ttlMs: number) {
  await dataSource.query(
    `INSERT INTO castlog_auth.tokens (user_id, token_hash, kind, created_at, expires_at)
     SELECT $1, md5(random()::text || i), 'session',
            $2::timestamptz + i * interval '1 second', $2::timestamptz + i * interval '1 second' + $3 * interval '1 millisecond'
       FROM generate_series(1, $4::int) AS i`,
    [userId, createdAt, ttlMs, count],
  );
}

const sweepable = async (now: Date): Promise<number> =>
  Number(
    (
      await dataSource.query(
        `SELECT count(*) AS n FROM castlog_auth.tokens
          WHERE kind = 'session' AND (expires_at <= $1 OR revoked_at IS NOT NULL)`,
        [now],
      )
    )[0].n,
  );

beforeAll(async () => {
  dataSource = await openAuthTestDatabase('castlog_auth_sessions');
  store = new AuthStore(dataSource);
});

afterAll(async () => {
  await dataSource?.destroy();
});

describe('sessions', () => {
  it('are issued for 14 days by default, stored as hashes of kind session, and name their user', async () => {
    const user = await freshUser();
    const issued = await store.issueSession(user.id, undefined, T0);
    expect(issued).toEqual({
      id: expect.any(String),
      token: expect.stringMatching(/^cl_[A-Za-z0-9_-]{43}$/),
      expiresAt: at(SESSION_TTL_MS),
    });
    expect(SESSION_TTL_MS).toBe(14 * 24 * HOUR);
    const rows = await dataSource.query(`SELECT * FROM castlog_auth.tokens WHERE id = $1`, [issued.id]);
    expect(rows).toEqual([expect.objectContaining({ token_hash: hashToken(issued.token), kind: 'session' })]);
    expect(JSON.stringify(rows)).not.toContain(issued.token);

    const owner = { userId: user.id, userName: user.name, expiresAt: at(SESSION_TTL_MS), isAdmin: false };
    expect(await store.sessionOwner(issued.token, T0)).toEqual(owner);
    expect(await store.sessionOwner(issued.token, at(SESSION_TTL_MS / 2))).toEqual(owner);
    expect(await store.sessionOwner(issued.token, at(SESSION_TTL_MS))).toBeNull();
  });

  it('used past half their lifetime are issued again in place, for another lifetime from then', async () => {
    const user = await freshUser();
    const issued = await store.issueSession(user.id, 10 * HOUR, T0);
    const owner = (expiresAt: Date) => ({ userId: user.id, userName: user.name, expiresAt, isAdmin: false });
    expect(await store.sessionOwner(issued.token, at(4 * HOUR))).toEqual(owner(at(10 * HOUR)));
    expect(await store.sessionOwner(issued.token, at(6 * HOUR))).toEqual(owner(at(16 * HOUR)));
    expect(await store.sessionOwner(issued.token, at(7 * HOUR))).toEqual(owner(at(16 * HOUR)));
    expect(await sessionsOf(user.id)).toEqual([
      { token_hash: hashToken(issued.token), expires_at: at(16 * HOUR) },
    ]);
    // Unused, it still ends a lifetime after its last renewal.
    expect(await store.sessionOwner(issued.token, at(16 * HOUR))).toBeNull();
  });

  it('are no Bearer tokens, and Bearer tokens are no sessions', async () => {
    const user = await freshUser();
    const session = await store.issueSession(user.id, HOUR, T0);
    expect(await store.authenticateToken(session.token, T0)).toBeNull();
    expect(await store.tokenOwner(session.token, T0)).toBeNull();
    for (const kind of ['access', 'cli', 'refresh'] as const) {
      const { token } = await store.issueToken(user.id, kind, HOUR, T0);
      expect(await store.sessionOwner(token, T0)).toBeNull();
    }
    const { token } = await store.issueToken(user.id, 'cli', HOUR, T0);
    expect(await store.tokenOwner(token, T0)).toEqual({
      userId: user.id,
      userName: user.name,
      expiresAt: at(HOUR),
      isAdmin: false,
    });
  });

  it('of kind web never authenticate as gpodder.net sessions, nor the reverse', async () => {
    const user = await freshUser();
    const web = await store.issueSession(user.id, HOUR, T0, 'web');
    const gpodder = await store.issueSession(user.id, HOUR, T0);
    const [row] = await dataSource.query(`SELECT kind FROM castlog_auth.tokens WHERE id = $1`, [web.id]);
    expect(row.kind).toBe('web');
    const owner = { userId: user.id, userName: user.name, expiresAt: at(HOUR), isAdmin: false };
    expect(await store.sessionOwner(web.token, T0, 'web')).toEqual(owner);
    expect(await store.sessionOwner(web.token, T0)).toBeNull();
    expect(await store.sessionOwner(web.token, T0, 'session')).toBeNull();
    expect(await store.sessionOwner(gpodder.token, T0, 'web')).toBeNull();
    expect(await store.sessionOwner(gpodder.token, T0)).toEqual(owner);
    expect(await store.authenticateToken(web.token, T0)).toBeNull();

    expect(await store.endSession(web.token, user.id)).toBe(false);
    expect(await store.endSession(gpodder.token, user.id, 'web')).toBe(false);
    expect(await store.sessionOwner(web.token, T0, 'web')).not.toBeNull();
    expect(await store.endSession(web.token, user.id, 'web')).toBe(true);
    expect(await store.sessionOwner(web.token, T0, 'web')).toBeNull();
    expect(await store.sessionOwner(gpodder.token, T0)).not.toBeNull();
  });

  it("name their owner's administrator flag as it is when looked up", async () => {
    const user = await freshUser();
    const web = await store.issueSession(user.id, HOUR, T0, 'web');
    expect((await store.sessionOwner(web.token, T0, 'web'))?.isAdmin).toBe(false);
    await store.setAdmin(user.name, true);
    expect((await store.sessionOwner(web.token, T0, 'web'))?.isAdmin).toBe(true);
  });

  it('of another kind than session or web are refused', async () => {
    const user = await freshUser();
    const kind = 'cli' as 'web';
    await expect(store.issueSession(user.id, HOUR, T0, kind)).rejects.toBeInstanceOf(RangeError);
    await expect(store.sessionOwner('x', T0, kind)).rejects.toBeInstanceOf(RangeError);
  });

  it('of kind web count against their own cap, and are swept like the others', async () => {
    const user = await freshUser();
    await insertSessions(user.id, MAX_SESSIONS_PER_USER, T0, 24 * HOUR);
    await store.issueSession(user.id, 24 * HOUR, at(HOUR), 'web');
    expect(await sessionsOf(user.id)).toHaveLength(MAX_SESSIONS_PER_USER);
    const expiredWeb = await store.issueSession(user.id, HOUR, T0, 'web');
    await store.issueSession((await freshUser()).id, HOUR, at(2 * HOUR), 'web');
    expect(
      await dataSource.query(`SELECT id FROM castlog_auth.tokens WHERE id = $1`, [expiredWeb.id]),
    ).toEqual([]);
  });

  it('are not issued for an unknown user, nor with a lifetime of 0', async () => {
    await expect(store.issueSession(randomUUID())).rejects.toBeInstanceOf(UserNotFoundError);
    await expect(store.issueSession('not-a-uuid')).rejects.toBeInstanceOf(UserNotFoundError);
    await expect(store.issueSession((await freshUser()).id, 0)).rejects.toBeInstanceOf(RangeError);
  });

  it('end: the session no longer authenticates, only the user it belongs to may end it', async () => {
    const user = await freshUser();
    const other = await freshUser();
    const session = await store.issueSession(user.id, HOUR, T0);
    expect(await store.endSession(session.token, other.id)).toBe(false);
    expect(await store.sessionOwner(session.token, T0)).not.toBeNull();
    expect(await store.endSession(session.token, user.id)).toBe(true);
    expect(await store.sessionOwner(session.token, T0)).toBeNull();
    expect(await sessionsOf(user.id)).toEqual([]);
    expect(await store.endSession(session.token, user.id)).toBe(false);

    const unscoped = await store.issueSession(user.id, HOUR, T0);
    expect(await store.endSession(unscoped.token)).toBe(true);
    expect(await store.sessionOwner(unscoped.token, T0)).toBeNull();
  });

  it('end only sessions: a Bearer token or garbage is left alone', async () => {
    const user = await freshUser();
    const { token } = await store.issueToken(user.id, 'cli', HOUR, T0);
    expect(await store.endSession(token, user.id)).toBe(false);
    expect(await store.authenticateToken(token, T0)).toBe(user.id);
    expect(await store.endSession('garbage')).toBe(false);
    expect(await store.endSession(token, 'not-a-uuid')).toBe(false);
  });

  it('stop working when revoked (castlog tokens revoke), and go with their user', async () => {
    const user = await freshUser();
    const revoked = await store.issueSession(user.id, HOUR, T0);
    expect(await store.revokeToken(revoked.token, T0)).toBe(true);
    expect(await store.sessionOwner(revoked.token, T0)).toBeNull();
    const removed = await store.issueSession(user.id, HOUR, T0);
    expect(await store.removeUser(user.name)).toBe(true);
    expect(await store.sessionOwner(removed.token, T0)).toBeNull();
  });

  it('issued sweep away up to 100 ended or expired sessions of any user, and nothing live', async () => {
    const [someone, another, issuer] = [await freshUser(), await freshUser(), await freshUser()];
    const later = at(30 * 24 * HOUR);
    const revoked = await store.issueSession(another.id, 100 * 24 * HOUR, later);
    await store.revokeToken(revoked.token, later);
    await insertSessions(someone.id, 130, T0, HOUR); // all expired at `later`
    await insertSessions(another.id, 3, later, HOUR); // live at `later`
    const expiredCli = await store.issueToken(someone.id, 'cli', HOUR, T0);
    const before = await sweepable(later);
    expect(before).toBeGreaterThanOrEqual(131);

    await store.issueSession(issuer.id, HOUR, later);
    expect(await sweepable(later)).toBe(before - 100);
    await store.issueSession(issuer.id, HOUR, later);
    expect(await sweepable(later)).toBe(Math.max(0, before - 200));
    while ((await sweepable(later)) > 0) await store.issueSession(issuer.id, HOUR, later);

    expect(await sessionsOf(someone.id)).toEqual([]);
    expect(await sessionsOf(another.id)).toHaveLength(3);
    expect(
      await dataSource.query(`SELECT id FROM castlog_auth.tokens WHERE id = $1`, [expiredCli.id]),
    ).toHaveLength(1);
  });

  it(`issued end the user's sessions issued or renewed longest ago beyond ${MAX_SESSIONS_PER_USER}`, async () => {
    const user = await freshUser();
    const inUse = await store.issueSession(user.id, 24 * HOUR, T0);
    await insertSessions(user.id, MAX_SESSIONS_PER_USER - 1, at(HOUR), 24 * HOUR);
    // Used past half its lifetime: renewed, it is now the one issued last.
    expect(await store.sessionOwner(inUse.token, at(13 * HOUR))).not.toBeNull();
    const oldestUnused = (await sessionsOf(user.id))[0]!;
    await store.issueSession(user.id, 24 * HOUR, at(14 * HOUR));
    const kept = (await sessionsOf(user.id)).map((row) => row.token_hash);
    expect(kept).toHaveLength(MAX_SESSIONS_PER_USER);
    expect(kept).toContain(hashToken(inUse.token));
    expect(kept).not.toContain(oldestUnused.token_hash);
  });

  it('issued end sessions nobody has presented before one in use, however many are issued', async () => {
    const user = await freshUser();
    const inUse = await store.issueSession(user.id, 24 * HOUR, T0);
    // Presented once, well before half its lifetime: used, not renewed.
    expect(await store.sessionOwner(inUse.token, at(HOUR))).not.toBeNull();
    const [row] = await dataSource.query(
      `SELECT used_at, created_at FROM castlog_auth.tokens WHERE token_hash = $1`,
      [hashToken(inUse.token)],
    );
    expect(row).toEqual({ used_at: at(HOUR), created_at: T0 });
    // A client sending Basic without keeping the cookie: a new session per request.
    const unused: string[] = [];
    for (let i = 0; i < MAX_SESSIONS_PER_USER + 20; i += 1)
      unused.push((await store.issueSession(user.id, 24 * HOUR, at(2 * HOUR + i))).token);
    const kept = (await sessionsOf(user.id)).map((session) => session.token_hash);
    expect(kept).toHaveLength(MAX_SESSIONS_PER_USER);
    expect(kept).toContain(hashToken(inUse.token));
    expect(kept).toEqual(
      expect.arrayContaining(unused.slice(-(MAX_SESSIONS_PER_USER - 1)).map((token) => hashToken(token))),
    );
    expect(await store.sessionOwner(inUse.token, at(3 * HOUR))).not.toBeNull();
  });

  it(`issued end the user's oldest live sessions beyond ${MAX_SESSIONS_PER_USER}`, async () => {
    const user = await freshUser();
    const other = await freshUser();
    await insertSessions(user.id, MAX_SESSIONS_PER_USER, T0, 24 * HOUR);
    await insertSessions(other.id, MAX_SESSIONS_PER_USER, T0, 24 * HOUR);
    const oldest = (await sessionsOf(user.id))[0]!;
    const now = at(HOUR);
    const newest = await store.issueSession(user.id, HOUR, now);

    const kept = await sessionsOf(user.id);
    expect(kept).toHaveLength(MAX_SESSIONS_PER_USER);
    expect(kept.map((row) => row.token_hash)).not.toContain(oldest.token_hash);
    expect(kept.at(-1)?.token_hash).toBe(hashToken(newest.token));
    expect(await store.sessionOwner(newest.token, now)).not.toBeNull();
    expect(await sessionsOf(other.id)).toHaveLength(MAX_SESSIONS_PER_USER);
  });
});
