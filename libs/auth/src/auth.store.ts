import { DataSource, QueryFailedError, QueryResult } from 'typeorm';
import {
  DEFAULT_SCRYPT_PARAMS,
  ScryptParams,
  dummyPasswordHash,
  hashPassword,
  verifyPassword,
} from './password';
import { TokenKind, generateToken, hashToken, isTokenShaped } from './token';

export class UserExistsError extends Error {
  constructor(readonly userName: string) {
    super(`A user named ${userName} already exists`);
    this.name = 'UserExistsError';
  }
}

export class UserNotFoundError extends Error {
  constructor(readonly user: string) {
    super(`No user ${user}`);
    this.name = 'UserNotFoundError';
  }
}

/** A name or password the store refuses (see `checkUserName`, `checkPassword`). */
export class InvalidCredentialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidCredentialError';
  }
}

export interface User {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
}

export interface IssuedToken {
  readonly id: string;
  readonly token: string;
  readonly expiresAt: Date;
}

/** An access token and its lifetime: the body of the sync draft's `POST /auth/refresh`. */
export interface AccessTokenResponse {
  readonly access_token: string;
  /** Lifetime of the access token in seconds. */
  readonly expires_in: number;
}

/** The body of `POST /v1/auth/login` and `/v1/auth/refresh`. */
export interface TokenResponse extends AccessTokenResponse {
  readonly token_type: 'Bearer';
  readonly refresh_token: string;
}

/** What a login issues: `/v1`'s answer, and when the refresh token in it expires (which the sync
 * draft's `POST /auth/login` answers). */
export interface IssuedLogin {
  readonly tokens: TokenResponse;
  readonly refreshExpiresAt: Date;
}

/** A user named by id or by name. A bare string is an id when it is a UUID some user has as id,
 * otherwise a name. */
export type UserRef = string | { readonly id: string } | { readonly name: string };

/** The owner of a live token, as `tokenOwner` and `sessionOwner` answer it. */
export interface TokenOwner {
  readonly userId: string;
  readonly userName: string;
  readonly expiresAt: Date;
}

/** A token that authenticates at `$2`: of a kind in `$3`, hashed as `$1`, neither revoked nor
 * expired; with its owner's name. */
const LIVE_TOKEN = `
  SELECT t.id, t.user_id, u.name, t.created_at, t.expires_at
    FROM castlog_auth.tokens t JOIN castlog_auth.users u ON u.id = t.user_id
   WHERE t.token_hash = $1 AND t.kind = ANY($3::text[]) AND t.revoked_at IS NULL AND t.expires_at > $2`;

type OwnerRow = { user_id: string; name: string; expires_at: Date };
const ownerOf = (row: OwnerRow): TokenOwner => ({
  userId: row.user_id,
  userName: row.name,
  expiresAt: row.expires_at,
});

/** How long a gpodder.net session lasts after it is issued (gpodder.net's Django default). */
export const SESSION_TTL_MS = 14 * 24 * 3_600_000;
/** Most live sessions a user keeps: issuing one more ends one beyond it (a client that ignores the
 * cookie and sends Basic every time would otherwise add a row per request). Sessions nobody has
 * presented go first, newest kept; then those issued or renewed longest ago. So a client sending
 * Basic without keeping the cookie cannot push out the session of a client that uses its own, and
 * a session in use (`sessionOwner` renews it) outlives those of clients long gone. A client whose
 * session ended this way answers the 401 with its password and gets a new one. */
export const MAX_SESSIONS_PER_USER = 100;
/** Most ended or expired sessions (of any user) one issue sweeps away. */
const SESSION_SWEEP_BATCH = 100;

export interface AuthStoreOptions {
  /** scrypt cost for new password hashes; existing hashes keep the parameters they were made with. */
  readonly passwordParams?: ScryptParams;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** No colon (Basic credentials split at the first one), no white space or control characters. */
const USER_NAME = /^[^\s:\p{Cc}]{1,128}$/u;
const MAX_PASSWORD_LENGTH = 1024;
const UNIQUE_VIOLATION = '23505';

export const isUuid = (text: string): boolean => UUID.test(text);

/** Throws InvalidCredentialError unless the name can be used (1..128 characters, no colon,
 * white space or control characters). */
export function checkUserName(name: string): void {
  if (!USER_NAME.test(name)) {
    throw new InvalidCredentialError(
      'user name must be 1 to 128 characters without colons, white space or control characters',
    );
  }
}

/** Throws InvalidCredentialError unless the password can be used (1..1024 characters). */
export function checkPassword(password: string): void {
  if (password.length === 0) throw new InvalidCredentialError('password must not be empty');
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new InvalidCredentialError(`password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  }
}

function checkTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
    throw new RangeError(`token lifetime must be > 0 ms: ${ttlMs}`);
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string } | undefined;
  return driverError?.code === UNIQUE_VIOLATION && driverError.constraint === constraint;
}

/** Users, password checks and tokens, in schema castlog_auth (migration AuthTables1732400000000).
 * Raw parameterised SQL; every method is one statement, so no method leaves half a change behind. */
export class AuthStore {
  private readonly passwordParams: ScryptParams;
  private readonly dummyHash: string;

  constructor(
    private readonly dataSource: DataSource,
    options: AuthStoreOptions = {},
  ) {
    this.passwordParams = options.passwordParams ?? DEFAULT_SCRYPT_PARAMS;
    this.dummyHash = dummyPasswordHash(this.passwordParams);
  }

  /** Creates a user; UserExistsError when the name is taken (the unique constraint decides). */
  async addUser(name: string, password: string): Promise<User> {
    checkUserName(name);
    checkPassword(password);
    const passwordHash = await hashPassword(password, this.passwordParams);
    try {
      const [row] = await this.rows<UserRow>(
        `INSERT INTO castlog_auth.users (name, password_hash) VALUES ($1, $2)
         RETURNING id, name, created_at`,
        [name, passwordHash],
      );
      return toUser(row!);
    } catch (error) {
      if (isUniqueViolation(error, 'users_name_key')) throw new UserExistsError(name);
      throw error;
    }
  }

  /** All users, by name. */
  async listUsers(): Promise<User[]> {
    const rows = await this.rows<UserRow>(
      `SELECT id, name, created_at FROM castlog_auth.users ORDER BY name COLLATE "C"`,
    );
    return rows.map(toUser);
  }

  /** Removes a user and, by cascade, all its tokens. False when there is no such user. */
  async removeUser(name: string): Promise<boolean> {
    const rows = await this.rows(`DELETE FROM castlog_auth.users WHERE name = $1 RETURNING id`, [name]);
    return rows.length > 0;
  }

  /** Issues a token of the given kind, valid for ttlMs from now. UserNotFoundError when the user
   * does not exist. The token text is answered once; only its hash is stored. */
  async issueToken(
    user: UserRef,
    kind: TokenKind,
    ttlMs: number,
    now: Date = new Date(),
  ): Promise<IssuedToken> {
    checkTtl(ttlMs);
    const token = generateToken();
    const expiresAt = new Date(now.getTime() + ttlMs);
    const [byId, byName] = userLookup(user);
    const [row] = await this.rows<{ id: string }>(
      `INSERT INTO castlog_auth.tokens (user_id, token_hash, kind, created_at, expires_at)
       SELECT u.id, $3::text, $4::text, $5::timestamptz, $6::timestamptz FROM castlog_auth.users u
        WHERE u.id = $1::uuid OR u.name = $2
        ORDER BY (u.id = $1::uuid) IS TRUE DESC
        LIMIT 1
       RETURNING id`,
      [byId, byName, hashToken(token), kind, now, expiresAt],
    );
    if (!row)
      throw new UserNotFoundError(typeof user === 'string' ? user : 'id' in user ? user.id : user.name);
    return { id: row.id, token, expiresAt };
  }

  /** Revokes a token named by its text or by its id. True when it exists (revoking twice keeps the
   * first revocation time), false when there is no such token. */
  async revokeToken(tokenOrId: string, now: Date = new Date()): Promise<boolean> {
    const column = isUuid(tokenOrId) ? 'id' : 'token_hash';
    const key = column === 'id' ? tokenOrId : hashToken(tokenOrId);
    const rows = await this.rows(
      `UPDATE castlog_auth.tokens SET revoked_at = COALESCE(revoked_at, $2)
        WHERE ${column} = $1 RETURNING id`,
      [key, now],
    );
    return rows.length > 0;
  }

  /** The user id an access or CLI token belongs to, or null when the token is unknown, expired,
   * revoked, a refresh token (which only `refresh` accepts) or a session (which only
   * `sessionOwner` accepts). */
  async authenticateToken(token: string, now: Date = new Date()): Promise<string | null> {
    return (await this.tokenOwner(token, now))?.userId ?? null;
  }

  /** Like `authenticateToken`, with the user's name and the token's expiry. */
  async tokenOwner(token: string, now: Date = new Date()): Promise<TokenOwner | null> {
    return this.liveTokenOwner(token, ['access', 'cli'], now);
  }

  /** Issues a gpodder.net session for the user with this id, valid for ttlMs from now (a token of
   * kind `session`, stored hashed like the others). UserNotFoundError when there is no such user.
   * The same statement sweeps up to 100 ended or expired sessions of any user, and ends the user's
   * oldest live sessions beyond MAX_SESSIONS_PER_USER. */
  async issueSession(
    userId: string,
    ttlMs: number = SESSION_TTL_MS,
    now: Date = new Date(),
  ): Promise<IssuedToken> {
    checkTtl(ttlMs);
    const token = generateToken();
    const expiresAt = new Date(now.getTime() + ttlMs);
    const [row] = isUuid(userId)
      ? await this.rows<{ id: string }>(
          `WITH swept AS (
             DELETE FROM castlog_auth.tokens WHERE id IN (
               (SELECT id FROM castlog_auth.tokens
                 WHERE kind = 'session' AND (expires_at <= $4::timestamptz OR revoked_at IS NOT NULL)
                 ORDER BY expires_at LIMIT ${SESSION_SWEEP_BATCH})
               UNION
               (SELECT id FROM castlog_auth.tokens
                 WHERE user_id = $1::uuid AND kind = 'session' AND revoked_at IS NULL
                   AND expires_at > $4::timestamptz
                 ORDER BY used_at IS NULL, created_at DESC, id OFFSET ${MAX_SESSIONS_PER_USER - 1}))
           )
           INSERT INTO castlog_auth.tokens (user_id, token_hash, kind, created_at, expires_at)
           SELECT u.id, $2::text, 'session', $4::timestamptz, $3::timestamptz
             FROM castlog_auth.users u WHERE u.id = $1::uuid
           RETURNING id`,
          [userId, hashToken(token), expiresAt, now],
        )
      : [];
    if (!row) throw new UserNotFoundError(userId);
    return { id: row.id, token, expiresAt };
  }

  /** The owner of a live session (issued by `issueSession`, not ended, revoked or expired), or
   * null; access, CLI and refresh tokens are not sessions. A session used past half its lifetime is
   * issued again in place, the same token for another lifetime from `now` (its `created_at` moves
   * with it): a client that keeps syncing keeps its session, written at most once per half
   * lifetime. mygpoclient, for one, answers only three 401s with its password in a client's life.
   * Its first use and each renewal set `used_at`, which the cap on a user's sessions reads.
   */
  async sessionOwner(token: string, now: Date = new Date()): Promise<TokenOwner | null> {
    if (!isTokenShaped(token)) return null;
    const [row] = await this.rows<OwnerRow>(
      `WITH live AS (${LIVE_TOKEN}),
       due AS (
         SELECT live.id, live.expires_at - $2::timestamptz < (live.expires_at - live.created_at) / 2 AS renew,
                $2::timestamptz + (live.expires_at - live.created_at) AS renewed_expiry
           FROM live
       ),
       renewed AS (
         UPDATE castlog_auth.tokens t
            SET used_at = $2,
                created_at = CASE WHEN due.renew THEN $2 ELSE t.created_at END,
                expires_at = CASE WHEN due.renew THEN due.renewed_expiry ELSE t.expires_at END
           FROM due
          WHERE t.id = due.id AND (due.renew OR t.used_at IS NULL)
         RETURNING t.id, t.expires_at
       )
       SELECT live.user_id, live.name, coalesce(renewed.expires_at, live.expires_at) AS expires_at
         FROM live LEFT JOIN renewed ON renewed.id = live.id`,
      [hashToken(token), now, ['session']],
    );
    return row ? ownerOf(row) : null;
  }

  /** Ends a session: it no longer authenticates anywhere. With `userId`, only a session of that
   * user. True when a live or expired session was ended, false when there was none. */
  async endSession(token: string, userId?: string): Promise<boolean> {
    if (!isTokenShaped(token) || (userId !== undefined && !isUuid(userId))) return false;
    const rows = await this.rows(
      `DELETE FROM castlog_auth.tokens
        WHERE token_hash = $1 AND kind = 'session' AND ($2::uuid IS NULL OR user_id = $2::uuid)
       RETURNING id`,
      [hashToken(token), userId ?? null],
    );
    return rows.length > 0;
  }

  private async liveTokenOwner(
    token: string,
    kinds: readonly TokenKind[],
    now: Date,
  ): Promise<TokenOwner | null> {
    if (!isTokenShaped(token)) return null;
    const [row] = await this.rows<OwnerRow>(LIVE_TOKEN, [hashToken(token), now, kinds]);
    return row ? ownerOf(row) : null;
  }

  /** The user id when the password is right, otherwise null. An unknown user costs one scrypt too. */
  async authenticatePassword(name: string, password: string): Promise<string | null> {
    const [row] = await this.rows<{ id: string; password_hash: string }>(
      `SELECT id, password_hash FROM castlog_auth.users WHERE name = $1`,
      [name],
    );
    if (!row) {
      await verifyPassword(password, this.dummyHash);
      return null;
    }
    return (await verifyPassword(password, row.password_hash)) ? row.id : null;
  }

  /** An access and a refresh token for a right name and password, otherwise null. */
  async login(
    name: string,
    password: string,
    accessTtlMs: number,
    refreshTtlMs: number,
    now: Date = new Date(),
  ): Promise<TokenResponse | null> {
    return (await this.issueLogin(name, password, accessTtlMs, refreshTtlMs, now))?.tokens ?? null;
  }

  /** `login`, answering also when the refresh token expires. */
  async issueLogin(
    name: string,
    password: string,
    accessTtlMs: number,
    refreshTtlMs: number,
    now: Date = new Date(),
  ): Promise<IssuedLogin | null> {
    checkTtl(accessTtlMs);
    checkTtl(refreshTtlMs);
    const userId = await this.authenticatePassword(name, password);
    if (!userId) return null;
    const pair = newPair(accessTtlMs, refreshTtlMs, now);
    await this.rows(
      `INSERT INTO castlog_auth.tokens (user_id, token_hash, kind, created_at, expires_at)
       VALUES ($1, $2, 'access', $4, $5), ($1, $3, 'refresh', $4, $6)`,
      [
        userId,
        hashToken(pair.access),
        hashToken(pair.refresh),
        now,
        pair.accessExpiresAt,
        pair.refreshExpiresAt,
      ],
    );
    return { tokens: pair.response, refreshExpiresAt: pair.refreshExpiresAt };
  }

  /** A new access token for the owner of a live refresh token, which stays as it is (the sync
   * draft's refresh: the same refresh token buys access tokens until it expires or is revoked);
   * null for a refresh token that is unknown, expired or revoked, and for any other kind of token. */
  async refreshAccess(
    refreshToken: string,
    accessTtlMs: number,
    now: Date = new Date(),
  ): Promise<AccessTokenResponse | null> {
    checkTtl(accessTtlMs);
    if (!isTokenShaped(refreshToken)) return null;
    const access = generateToken();
    const rows = await this.rows(
      `INSERT INTO castlog_auth.tokens (user_id, token_hash, kind, created_at, expires_at)
       SELECT t.user_id, $3::text, 'access', $2::timestamptz, $4::timestamptz FROM castlog_auth.tokens t
        WHERE t.token_hash = $1 AND t.kind = 'refresh' AND t.revoked_at IS NULL AND t.expires_at > $2::timestamptz
       RETURNING id`,
      [hashToken(refreshToken), now, hashToken(access), new Date(now.getTime() + accessTtlMs)],
    );
    return rows.length > 0 ? { access_token: access, expires_in: secondsOf(accessTtlMs) } : null;
  }

  /** Exchanges a live refresh token for a new access and refresh token, or null. The old refresh
   * token is revoked in the same statement (rotation): of two concurrent refreshes with one token,
   * one wins and the other answers null. */
  async refresh(
    refreshToken: string,
    accessTtlMs: number,
    refreshTtlMs: number,
    now: Date = new Date(),
  ): Promise<TokenResponse | null> {
    checkTtl(accessTtlMs);
    checkTtl(refreshTtlMs);
    if (!isTokenShaped(refreshToken)) return null;
    const pair = newPair(accessTtlMs, refreshTtlMs, now);
    const rows = await this.rows(
      `WITH used AS (
         UPDATE castlog_auth.tokens SET revoked_at = $2::timestamptz
          WHERE token_hash = $1 AND kind = 'refresh' AND revoked_at IS NULL AND expires_at > $2::timestamptz
          RETURNING user_id
       )
       INSERT INTO castlog_auth.tokens (user_id, token_hash, kind, created_at, expires_at)
       SELECT used.user_id, fresh.token_hash, fresh.kind, $2::timestamptz, fresh.expires_at
         FROM used CROSS JOIN (VALUES ($3::text, 'access', $5::timestamptz), ($4::text, 'refresh', $6::timestamptz))
           AS fresh (token_hash, kind, expires_at)
       RETURNING id`,
      [
        hashToken(refreshToken),
        now,
        hashToken(pair.access),
        hashToken(pair.refresh),
        pair.accessExpiresAt,
        pair.refreshExpiresAt,
      ],
    );
    return rows.length > 0 ? pair.response : null;
  }

  /** Runs one statement and answers its rows, whatever the command (TypeORM's plain `query`
   * answers `[rows, count]` for UPDATE and DELETE). */
  private async rows<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const result = (await runner.query(sql, params, true)) as QueryResult<T>;
      return result.records;
    } finally {
      await runner.release();
    }
  }
}

interface UserRow {
  id: string;
  name: string;
  created_at: Date;
}

const toUser = (row: UserRow): User => ({ id: row.id, name: row.name, createdAt: row.created_at });

/** [id or null, name or null] for the lookup in issueToken. */
function userLookup(user: UserRef): [string | null, string | null] {
  if (typeof user !== 'string')
    return 'id' in user ? [isUuid(user.id) ? user.id : null, null] : [null, user.name];
  return [isUuid(user) ? user : null, user];
}

/** A token lifetime as `expires_in` says it: whole seconds. */
const secondsOf = (ttlMs: number): number => Math.floor(ttlMs / 1000);

function newPair(accessTtlMs: number, refreshTtlMs: number, now: Date) {
  const access = generateToken();
  const refresh = generateToken();
  const response: TokenResponse = {
    access_token: access,
    token_type: 'Bearer',
    expires_in: secondsOf(accessTtlMs),
    refresh_token: refresh,
  };
  return {
    access,
    refresh,
    accessExpiresAt: new Date(now.getTime() + accessTtlMs),
    refreshExpiresAt: new Date(now.getTime() + refreshTtlMs),
    response,
  };
}
