import type { AuthStore } from './auth.store';

export type Credentials =
  | { readonly kind: 'bearer'; readonly token: string }
  | { readonly kind: 'basic'; readonly name: string; readonly password: string };

/** What `authenticate` needs from the store. */
export type CredentialVerifier = Pick<AuthStore, 'authenticateToken' | 'authenticatePassword'>;

/** `<scheme> <credentials>`: one scheme token, spaces, one token68 (RFC 9110 §11.4, RFC 7235). */
const AUTHORIZATION = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*) +([A-Za-z0-9._~+/-]+=*) *$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads an Authorization header: Bearer, or Basic with base64 `name:password` (the password may
 * contain colons; the name may not be empty). Anything else, including invalid base64 or UTF-8, is
 * null. Scheme names are case-insensitive. */
export function parseAuthorization(header: string | undefined): Credentials | null {
  if (typeof header !== 'string') return null;
  const match = AUTHORIZATION.exec(header.trim());
  if (!match) return null;
  const scheme = match[1]!.toLowerCase();
  const value = match[2]!;
  if (scheme === 'bearer') return { kind: 'bearer', token: value };
  if (scheme !== 'basic' || !BASE64.test(value)) return null;
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(value, 'base64'));
  } catch {
    return null;
  }
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  return { kind: 'basic', name: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The user id the header's credentials prove, or null when they are missing, malformed or wrong. */
export async function authenticate(
  store: CredentialVerifier,
  header: string | undefined,
  now: Date = new Date(),
): Promise<string | null> {
  const credentials = parseAuthorization(header);
  if (!credentials) return null;
  return credentials.kind === 'bearer'
    ? store.authenticateToken(credentials.token, now)
    : store.authenticatePassword(credentials.name, credentials.password);
}
