import { AuthTables1732400000000 } from './migrations/1732400000000-auth-tables';
import { TokenChangeNotices1732400000004 } from './migrations/1732400000004-token-change-notices';
import { RateLimitBuckets1732400000005 } from './migrations/1732400000005-rate-limit-buckets';
import { SessionTokens1732400000007 } from './migrations/1732400000007-session-tokens';
import { SessionUse1732400000009 } from './migrations/1732400000009-session-use';
import { UserChangeNotices1732400000010 } from './migrations/1732400000010-user-change-notices';
import { WebAccounts1732400000015 } from './migrations/1732400000015-web-accounts';
import { AppPasswordForms1732400000017 } from './migrations/1732400000017-app-password-forms';

export * from './app-password';
export * from './auth.store';
export * from './credentials';
export * from './password';
export * from './queries/users.query';
export * from './rate-limit.store';
export * from './token';
export {
  AuthTables1732400000000,
  TokenChangeNotices1732400000004,
  RateLimitBuckets1732400000005,
  SessionTokens1732400000007,
  SessionUse1732400000009,
  UserChangeNotices1732400000010,
  WebAccounts1732400000015,
  AppPasswordForms1732400000017,
};

/** Channel on which PostgreSQL announces a revoked or deleted token (payload: its hash) and a user
 * whose password or name changed, who was removed, or one of whose app passwords was revoked or
 * deleted (payload: `user:<id>`, see `changedUserOf`). */
export const TOKENS_CHANNEL = 'castlog_tokens';

const USER_NOTICE = /^user:([0-9a-f-]{36})$/;

/** The user id a notice on TOKENS_CHANNEL names, or undefined when it names a token. */
export function changedUserOf(payload: string): string | undefined {
  return USER_NOTICE.exec(payload)?.[1];
}

/** The migrations of the auth schema, in order, for a DataSource's `migrations` option. */
export const authMigrations = [
  AuthTables1732400000000,
  TokenChangeNotices1732400000004,
  RateLimitBuckets1732400000005,
  SessionTokens1732400000007,
  SessionUse1732400000009,
  UserChangeNotices1732400000010,
  WebAccounts1732400000015,
  AppPasswordForms1732400000017,
];
