import { DataSource, QueryFailedError, QueryResult, QueryRunner } from 'typeorm';
import {
  DEFAULT_SCRYPT_PARAMS,
  ScryptParams,
  dummyPasswordHash,
  hashPassword,
  verifyPassword,
} from './password';
import {
  APP_PASSWORD_PREFIX,
  MAX_APP_PASSWORDS_PER_USER,
  generateAppPassword,
  hashAppPassword,
  isAppPasswordShaped,
} from './app-password';
import { SessionKind, TokenKind, generateToken, hashToken, isTokenShaped } from './token';

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

/** The form asking for an app password was sent before and created `name` then (its secret was
 * shown that once). */
export class AppPasswordAlreadyCreatedError extends Error {
  constructor(readonly appName: string) {
    super(`this form already created the app password of ${appName}`);
    this.name = 'AppPasswordAlreadyCreatedError';
  }
}

export interface User {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
  readonly isAdmin: boolean;
}

/** An app password as its owner sees it in a list: never the secret. */
export interface AppPasswordInfo {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

/** A new app password: the secret is answered this once; only its keyed hash is stored. */
export interface CreatedAppPassword {
  readonly id: string;
  readonly name: string;
  readonly password: string;
  readonly createdAt: Date;
}

/** Who an app password proves, and which one it is (a gpodder.net session issued for it ends with it). */
export interface AppPasswordOwner {
  readonly userId: string;
  readonly appPasswordId: string;
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
  /** Whether the owner was an administrator when the token was looked up (what the pages'
   * navigation shows; the administration pages ask `isAdmin` each time). */
  readonly isAdmin: boolean;
}

/** A token that authenticates at `$2`: of a kind in `$3`, hashed as `$1`, neither revoked nor
 * expired; with its owner's name and administrator flag. A session issued for an app password ends with it:
 * `revokeAppPassword` deletes it, and the app password's check here also refuses one issued while
 * the revocation ran. */
const LIVE_TOKEN = `
  SELECT t.id, t.user_id, u.name, u.is_admin, t.created_at, t.expires_at
    FROM castlog_auth.tokens t JOIN castlog_auth.users u ON u.id = t.user_id
   WHERE t.token_hash = $1 AND t.kind = ANY($3::text[]) AND t.revoked_at IS NULL AND t.expires_at > $2
     AND (t.app_password_id IS NULL OR EXISTS (
       SELECT 1 FROM castlog_auth.app_passwords ap WHERE ap.id = t.app_password_id AND ap.revoked_at IS NULL))`;

/** The user `$1` (a UUID or null) or `$2` (a name or null) names, the one with that id first (see
 * UserRef). */
const USER_BY_REF = `
  SELECT u.id FROM castlog_auth.users u
   WHERE u.id = $1::uuid OR u.name = $2
   ORDER BY (u.id = $1::uuid) IS TRUE DESC
   LIMIT 1`;

type OwnerRow = { user_id: string; name: string; is_admin: boolean; expires_at: Date };
const ownerOf = (row: OwnerRow): TokenOwner => ({
  userId: row.user_id,
  userName: row.name,
  expiresAt: row.expires_at,
  isAdmin: row.is_admin,
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
const SESSION_KINDS: readonly string[] = ['session', 'web'] satisfies SessionKind[];
/** An app password's `last_used_at` moves at most this often, so that a client sending it on every
 * request (Kasts does) does not write on every request. */
const APP_PASSWORD_USE_GRANULARITY = '1 minute';
/** Revoked app passwords a user keeps (most recently revoked first); `createAppPassword` sweeps the
 * others, so that creating and revoking in a loop does not grow the table. */
const REVOKED_APP_PASSWORDS_KEPT = 50;

export interface AuthStoreOptions {
  /** scrypt cost for new password hashes; existing hashes keep the parameters they were made with. */
  readonly passwordParams?: ScryptParams;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** No colon (Basic credentials split at the first one), no white space or control characters. */
const USER_NAME = /^[^\s:\p{Cc}]{1,128}$/u;
/** 1..100 characters, no control characters (after trimming). */
const APP_PASSWORD_NAME = /^[^\p{Cc}]{1,100}$/u;
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

/** Throws InvalidCredentialError unless the password can be used (1..1024 characters, not starting
 * with the app password prefix, which would send it to the app password check and never match). */
export function checkPassword(password: string): void {
  if (password.length === 0) throw new InvalidCredentialError('password must not be empty');
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new InvalidCredentialError(`password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  }
  if (password.startsWith(APP_PASSWORD_PREFIX)) {
    throw new InvalidCredentialError(
      `password must not start with ${APP_PASSWORD_PREFIX} (app passwords do)`,
    );
  }
}

/** The name trimmed; InvalidCredentialError unless it is 1..100 characters without control
 * characters. */
export function checkAppPasswordName(name: string): string {
  const trimmed = name.trim();
  if (!APP_PASSWORD_NAME.test(trimmed)) {
    throw new InvalidCredentialError(
      'app password name must be 1 to 100 characters without control characters',
    );
  }
  return trimmed;
}

function checkSessionKind(kind: string): void {
  if (!SESSION_KINDS.includes(kind)) throw new RangeError(`not a session kind: ${kind}`);
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

/** Users, password checks, tokens and app passwords, in schema castlog_auth (migration
 * AuthTables1732400000000 and those after it). Raw parameterised SQL; every change is one statement
 * (`createAppPassword` one transaction), so no method leaves half a change behind. */
export class AuthStore {
  private readonly passwordParams: ScryptParams;
  private readonly dummyHash: string;
  /** The installation's app password key, loaded once (see `hashAppPassword`). */
  private appPasswordKey?: Promise<Buffer>;

  constructor(
    private readonly dataSource: DataSource,
    options: AuthStoreOptions = {},
  ) {
    this.passwordParams = options.passwordParams ?? DEFAULT_SCRYPT_PARAMS;
    this.dummyHash = dummyPasswordHash(this.passwordParams);
  }

  /** Creates a user, an administrator with `admin`; UserExistsError when the name is taken (the
   * unique constraint decides). */
  async addUser(name: string, password: string, options: { admin?: boolean } = {}): Promise<User> {
    checkUserName(name);
    checkPassword(password);
    const passwordHash = await hashPassword(password, this.passwordParams);
    try {
      const [row] = await this.rows<UserRow>(
        `INSERT INTO castlog_auth.users (name, password_hash, is_admin) VALUES ($1, $2, $3)
         RETURNING id, name, created_at, is_admin`,
        [name, passwordHash, options.admin ?? false],
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
      `SELECT id, name, created_at, is_admin FROM castlog_auth.users ORDER BY name COLLATE "C"`,
    );
    return rows.map(toUser);
  }

  /** Makes the user named `name` an administrator, or not. False when there is no such user. */
  async setAdmin(name: string, admin: boolean): Promise<boolean> {
    const rows = await this.rows(`UPDATE castlog_auth.users SET is_admin = $2 WHERE name = $1 RETURNING id`, [
      name,
      admin,
    ]);
    return rows.length > 0;
  }

  /** True when the user with this id is an administrator; false for anyone else or no one. */
  async isAdmin(userId: string): Promise<boolean> {
    if (!isUuid(userId)) return false;
    const [row] = await this.rows<{ is_admin: boolean }>(
      `SELECT is_admin FROM castlog_auth.users WHERE id = $1`,
      [userId],
    );
    return row?.is_admin ?? false;
  }

  /** Sets a user's password (an administrator's reset) and ends all its web and gpodder.net
   * sessions, except those issued for an app password, which stay as their app password does.
   * UserNotFoundError when there is no such user. */
  async setPassword(user: UserRef, password: string): Promise<void> {
    checkPassword(password);
    const passwordHash = await hashPassword(password, this.passwordParams);
    const rows = await this.rows(
      `WITH target AS (${USER_BY_REF}),
       changed AS (
         UPDATE castlog_auth.users u SET password_hash = $3 FROM target WHERE u.id = target.id RETURNING u.id
       ),
       ended AS (
         DELETE FROM castlog_auth.tokens t USING changed
          WHERE t.user_id = changed.id AND t.kind IN ('session', 'web') AND t.app_password_id IS NULL
       )
       SELECT id FROM changed`,
      [...userLookup(user), passwordHash],
    );
    if (rows.length === 0) throw new UserNotFoundError(refText(user));
  }

  /** Changes the user's own password when `current` is right (false otherwise, and when the
   * password changed meanwhile), and ends its other sessions: every web session but the one whose
   * token is `keepWebSession`, and every gpodder.net session except those issued for an app password.
   * App passwords and tokens stay. The change is announced (UserChangeNotices1732400000010), so
   * every API process forgets the Basic credentials it verified with the old password. */
  async changePassword(
    userId: string,
    current: string,
    next: string,
    keepWebSession?: string,
  ): Promise<boolean> {
    checkPassword(next);
    const [row] = isUuid(userId)
      ? await this.rows<{ password_hash: string }>(
          `SELECT password_hash FROM castlog_auth.users WHERE id = $1`,
          [userId],
        )
      : [];
    if (!(await verifyPassword(current, row?.password_hash ?? this.dummyHash)) || !row) return false;
    const nextHash = await hashPassword(next, this.passwordParams);
    const rows = await this.rows(
      `WITH changed AS (
         UPDATE castlog_auth.users SET password_hash = $3 WHERE id = $1 AND password_hash = $2 RETURNING id
       ),
       ended AS (
         DELETE FROM castlog_auth.tokens t USING changed
          WHERE t.user_id = changed.id AND t.app_password_id IS NULL
            AND (t.kind = 'session' OR (t.kind = 'web' AND t.token_hash IS DISTINCT FROM $4::text))
       )
       SELECT id FROM changed`,
      [userId, row.password_hash, nextHash, keepWebSession === undefined ? null : hashToken(keepWebSession)],
    );
    return rows.length > 0;
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
    const [row] = await this.rows<{ id: string }>(
      `INSERT INTO castlog_auth.tokens (user_id, token_hash, kind, created_at, expires_at)
       SELECT target.id, $3::text, $4::text, $5::timestamptz, $6::timestamptz FROM (${USER_BY_REF}) target
       RETURNING id`,
      [...userLookup(user), hashToken(token), kind, now, expiresAt],
    );
    if (!row) throw new UserNotFoundError(refText(user));
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

  /** Issues a session of the given kind (gpodder.net's `session` unless told, or a web page's
   * `web`) for the user with this id, valid for ttlMs from now (a token, stored hashed like the
   * others). With `appPasswordId`, a session the app password bought, which ends with it.
   * UserNotFoundError when there is no such user (or that app password of it is not live). The
   * same statement sweeps up to 100 ended or expired sessions (of both kinds, of any user), and ends
   * the user's oldest live sessions of this kind beyond MAX_SESSIONS_PER_USER. */
  async issueSession(
    userId: string,
    ttlMs: number = SESSION_TTL_MS,
    now: Date = new Date(),
    kind: SessionKind = 'session',
    appPasswordId?: string,
  ): Promise<IssuedToken> {
    checkTtl(ttlMs);
    checkSessionKind(kind);
    const token = generateToken();
    const expiresAt = new Date(now.getTime() + ttlMs);
    const valid = isUuid(userId) && (appPasswordId === undefined || isUuid(appPasswordId));
    const [row] = valid
      ? await this.rows<{ id: string }>(
          `WITH swept AS (
             DELETE FROM castlog_auth.tokens WHERE id IN (
               (SELECT id FROM castlog_auth.tokens
                 WHERE kind IN ('session', 'web') AND (expires_at <= $4::timestamptz OR revoked_at IS NOT NULL)
                 ORDER BY expires_at LIMIT ${SESSION_SWEEP_BATCH})
               UNION
               (SELECT id FROM castlog_auth.tokens
                 WHERE user_id = $1::uuid AND kind = $5::text AND revoked_at IS NULL
                   AND expires_at > $4::timestamptz
                 ORDER BY used_at IS NULL, created_at DESC, id OFFSET ${MAX_SESSIONS_PER_USER - 1}))
           )
           INSERT INTO castlog_auth.tokens (user_id, token_hash, kind, created_at, expires_at, app_password_id)
           SELECT u.id, $2::text, $5::text, $4::timestamptz, $3::timestamptz, $6::uuid
             FROM castlog_auth.users u
            WHERE u.id = $1::uuid
              AND ($6::uuid IS NULL OR EXISTS (
                SELECT 1 FROM castlog_auth.app_passwords ap
                 WHERE ap.id = $6::uuid AND ap.user_id = u.id AND ap.revoked_at IS NULL))
           RETURNING id`,
          [userId, hashToken(token), expiresAt, now, kind, appPasswordId ?? null],
        )
      : [];
    if (!row) throw new UserNotFoundError(userId);
    return { id: row.id, token, expiresAt };
  }

  /** The owner of a live session of this kind (issued by `issueSession`, not ended, revoked or
   * expired), or null; access, CLI and refresh tokens are not sessions, and a web session is no
   * gpodder.net session nor the reverse. A session used past half its lifetime is
   * issued again in place, the same token for another lifetime from `now` (its `created_at` moves
   * with it): a client that keeps syncing keeps its session, written at most once per half
   * lifetime. mygpoclient, for one, answers only three 401s with its password in a client's life.
   * Its first use and each renewal set `used_at`, which the cap on a user's sessions reads.
   */
  async sessionOwner(
    token: string,
    now: Date = new Date(),
    kind: SessionKind = 'session',
  ): Promise<TokenOwner | null> {
    checkSessionKind(kind);
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
       SELECT live.user_id, live.name, live.is_admin, coalesce(renewed.expires_at, live.expires_at) AS expires_at
         FROM live LEFT JOIN renewed ON renewed.id = live.id`,
      [hashToken(token), now, [kind]],
    );
    return row ? ownerOf(row) : null;
  }

  /** Ends a session of this kind: it no longer authenticates anywhere. With `userId`, only a
   * session of that user. True when a live or expired session was ended, false when there was none. */
  async endSession(token: string, userId?: string, kind: SessionKind = 'session'): Promise<boolean> {
    checkSessionKind(kind);
    if (!isTokenShaped(token) || (userId !== undefined && !isUuid(userId))) return false;
    const rows = await this.rows(
      `DELETE FROM castlog_auth.tokens
        WHERE token_hash = $1 AND kind = $3 AND ($2::uuid IS NULL OR user_id = $2::uuid)
       RETURNING id`,
      [hashToken(token), userId ?? null, kind],
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

  /** Creates an app password for the user with this id: a random secret (`clapp_…`) to use as the
   * password in HTTP Basic, instead of the user's own, wherever Basic is accepted. The name is
   * trimmed; InvalidCredentialError for a name of more than 100 characters, none or control
   * characters, and when the user has MAX_APP_PASSWORDS_PER_USER live ones already;
   * UserNotFoundError when there is no such user. With `formId` (a UUID, one per showing of the form
   * that asks), AppPasswordAlreadyCreatedError when that form already created one: a form sent again
   * creates nothing. */
  async createAppPassword(userId: string, name: string, formId?: string): Promise<CreatedAppPassword> {
    const trimmed = checkAppPasswordName(name);
    if (!isUuid(userId)) throw new UserNotFoundError(userId);
    if (formId !== undefined && !isUuid(formId)) throw new InvalidCredentialError('the form is not valid');
    const password = generateAppPassword();
    const secretHash = hashAppPassword(password, await this.loadAppPasswordKey());
    const row = await this.transaction(async (run) => {
      // The user's row lock orders concurrent creations, so that the checks below see them all.
      const [user] = await run(`SELECT id FROM castlog_auth.users WHERE id = $1 FOR NO KEY UPDATE`, [userId]);
      if (!user) throw new UserNotFoundError(userId);
      if (formId !== undefined) {
        const [earlier] = await run<{ name: string }>(
          `SELECT name FROM castlog_auth.app_passwords WHERE user_id = $1 AND form_id = $2`,
          [userId, formId],
        );
        if (earlier) throw new AppPasswordAlreadyCreatedError(earlier.name);
      }
      const [created] = await run<{ id: string; name: string; created_at: Date }>(
        `WITH swept AS (
           DELETE FROM castlog_auth.app_passwords WHERE id IN (
             SELECT id FROM castlog_auth.app_passwords WHERE user_id = $1 AND revoked_at IS NOT NULL
              ORDER BY revoked_at DESC, id OFFSET ${REVOKED_APP_PASSWORDS_KEPT})
         )
         INSERT INTO castlog_auth.app_passwords (user_id, name, secret_hash, form_id)
         SELECT $1, $2, $3, $4
          WHERE (SELECT count(*) FROM castlog_auth.app_passwords WHERE user_id = $1 AND revoked_at IS NULL)
                < ${MAX_APP_PASSWORDS_PER_USER}
         RETURNING id, name, created_at`,
        [userId, trimmed, secretHash, formId ?? null],
      );
      return created;
    });
    if (!row) {
      throw new InvalidCredentialError(
        `at most ${MAX_APP_PASSWORDS_PER_USER} app passwords per user: revoke one before creating another`,
      );
    }
    return { id: row.id, name: row.name, password, createdAt: row.created_at };
  }

  /** The user's live app passwords, newest first, without their secrets. */
  async listAppPasswords(userId: string): Promise<AppPasswordInfo[]> {
    if (!isUuid(userId)) return [];
    const rows = await this.rows<{ id: string; name: string; created_at: Date; last_used_at: Date | null }>(
      `SELECT id, name, created_at, last_used_at FROM castlog_auth.app_passwords
        WHERE user_id = $1 AND revoked_at IS NULL
        ORDER BY created_at DESC, id DESC`,
      [userId],
    );
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
    }));
  }

  /** Revokes one of the user's live app passwords and ends the gpodder.net sessions it bought, in
   * one statement. Both are announced on `castlog_tokens`, so every API process refuses them from
   * its next request on. False when the user has no such live app password. */
  async revokeAppPassword(userId: string, id: string): Promise<boolean> {
    if (!isUuid(userId) || !isUuid(id)) return false;
    const rows = await this.rows(
      `WITH revoked AS (
         UPDATE castlog_auth.app_passwords SET revoked_at = now()
          WHERE id = $2 AND user_id = $1 AND revoked_at IS NULL
         RETURNING id
       ),
       ended AS (
         DELETE FROM castlog_auth.tokens WHERE app_password_id IN (SELECT id FROM revoked)
       )
       SELECT id FROM revoked`,
      [userId, id],
    );
    return rows.length > 0;
  }

  /** The user id when `password` is a live app password of the user named `userName`, otherwise
   * null. One indexed query, no scrypt: the secret is random, so its keyed hash is looked up. */
  async authenticateAppPassword(
    userName: string,
    password: string,
    now: Date = new Date(),
  ): Promise<string | null> {
    return (await this.appPasswordOwner(userName, password, now))?.userId ?? null;
  }

  /** Like `authenticateAppPassword`, with which app password it is. Sets its `last_used_at` in the
   * same statement, at most once a minute. */
  async appPasswordOwner(
    userName: string,
    password: string,
    now: Date = new Date(),
  ): Promise<AppPasswordOwner | null> {
    if (!isAppPasswordShaped(password)) return null;
    const secretHash = hashAppPassword(password, await this.loadAppPasswordKey());
    const [row] = await this.rows<{ id: string; user_id: string }>(
      `WITH live AS (
         SELECT ap.id, ap.user_id, ap.last_used_at
           FROM castlog_auth.app_passwords ap JOIN castlog_auth.users u ON u.id = ap.user_id
          WHERE ap.secret_hash = $1 AND u.name = $2 AND ap.revoked_at IS NULL
       ),
       used AS (
         UPDATE castlog_auth.app_passwords ap SET last_used_at = $3
           FROM live
          WHERE ap.id = live.id
            AND (live.last_used_at IS NULL
                 OR live.last_used_at <= $3::timestamptz - interval '${APP_PASSWORD_USE_GRANULARITY}')
       )
       SELECT id, user_id FROM live`,
      [secretHash, userName, now],
    );
    return row ? { userId: row.user_id, appPasswordId: row.id } : null;
  }

  /** The key app passwords are hashed under (migration WebAccounts1732400000015), loaded once; a
   * failed load is tried again on the next call. */
  private loadAppPasswordKey(): Promise<Buffer> {
    if (this.appPasswordKey === undefined) {
      const loading = this.rows<{ key: Buffer }>(
        `SELECT key FROM castlog_auth.hash_keys WHERE name = 'app_passwords'`,
      ).then(([row]) => {
        if (!row) throw new Error('castlog_auth.hash_keys holds no app_passwords key');
        return row.key;
      });
      this.appPasswordKey = loading;
      loading.catch(() => {
        if (this.appPasswordKey === loading) this.appPasswordKey = undefined;
      });
    }
    return this.appPasswordKey;
  }

  /** Runs one statement and answers its rows, whatever the command (TypeORM's plain `query`
   * answers `[rows, count]` for UPDATE and DELETE). */
  private async rows<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    const runner = this.dataSource.createQueryRunner();
    try {
      return await statementRows<T>(runner, sql, params);
    } finally {
      await runner.release();
    }
  }

  /** Runs `body` in one transaction, its statements on one connection. */
  private async transaction<R>(body: (run: RunStatement) => Promise<R>): Promise<R> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      try {
        const result = await body((sql, params) => statementRows(runner, sql, params));
        await runner.commitTransaction();
        return result;
      } catch (error) {
        await runner.rollbackTransaction();
        throw error;
      }
    } finally {
      await runner.release();
    }
  }
}

type RunStatement = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

async function statementRows<T>(runner: QueryRunner, sql: string, params: unknown[] = []): Promise<T[]> {
  const result = (await runner.query(sql, params, true)) as QueryResult<T>;
  return result.records;
}

interface UserRow {
  id: string;
  name: string;
  created_at: Date;
  is_admin: boolean;
}

const toUser = (row: UserRow): User => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  isAdmin: row.is_admin,
});

/** A UserRef as an error names it. */
const refText = (user: UserRef): string =>
  typeof user === 'string' ? user : 'id' in user ? user.id : user.name;

/** [id or null, name or null] for USER_BY_REF. */
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
