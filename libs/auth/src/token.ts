import { hash, randomBytes } from 'node:crypto';

/** Every castlog token starts with this prefix, so a leaked one is recognisable (secret scanners). */
export const TOKEN_PREFIX = 'cl_';

/** `access` and `cli` tokens are Bearer credentials; `refresh` only buys new tokens; `session` is
 * the gpodder.net face's session cookie, accepted only as that cookie; `web` is a web page sign-in
 * session, accepted only by the web pages. */
export const TOKEN_KINDS = ['access', 'refresh', 'cli', 'session', 'web'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** The kinds of session: gpodder.net's cookie, or a web page sign-in. Neither stands for the other. */
export type SessionKind = Extract<TokenKind, 'session' | 'web'>;

const TOKEN_BYTES = 32;
/** `cl_` plus 32 random bytes in base64url (43 characters, no padding). */
const TOKEN_SHAPE = /^cl_[A-Za-z0-9_-]{43}$/;

/** A new random token. Only its hash is ever stored. */
export function generateToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(TOKEN_BYTES).toString('base64url')}`;
}

/** The stored form of a token: SHA-256, hex. The token has 256 random bits, so a fast hash is enough. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** True when the text has the shape of a token this service issues. */
export function isTokenShaped(text: string): boolean {
  return TOKEN_SHAPE.test(text);
}
