/** The session cookie's name, as gpodder.net (Django) names it. */
export const SESSION_COOKIE = 'sessionid';

/** The value of the session cookie in a Cookie header (`name=value` pairs separated by `;`, RFC
 * 6265 §4.2.1; a value may be quoted), or undefined when there is none. The first one counts. No
 * percent-decoding: sessions are base64url text, and anything else is no session anyway.
 * (@fastify/cookie's exported `parse` and `serialize` need the plugin registered first: they load
 * the `cookie` module on registration.) */
export function readSessionCookie(header: string | string[] | undefined): string | undefined {
  const text = Array.isArray(header) ? header.join('; ') : header;
  if (!text) return undefined;
  for (const pair of text.split(';')) {
    const equals = pair.indexOf('=');
    if (equals < 0 || pair.slice(0, equals).trim() !== SESSION_COOKIE) continue;
    const value = pair.slice(equals + 1).trim();
    const unquoted =
      value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
    return unquoted === '' ? undefined : unquoted;
  }
  return undefined;
}

/** A `Set-Cookie` value for the session cookie: HttpOnly, Path=/, SameSite=Lax, Secure when asked.
 * `token` is base64url text (no character needs escaping). */
function setCookie(token: string, maxAgeSeconds: number, expires: Date, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    `Max-Age=${maxAgeSeconds}`,
    'Path=/',
    `Expires=${expires.toUTCString()}`,
    'HttpOnly',
    ...(secure ? ['Secure'] : []),
    'SameSite=Lax',
  ].join('; ');
}

/** `Set-Cookie` for a session that lasts until `expiresAt`, Secure when the request came over
 * HTTPS. */
export function sessionCookie(token: string, expiresAt: Date, now: Date, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000));
  return setCookie(token, maxAge, expiresAt, secure);
}

/** `Set-Cookie` that makes the client drop the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return setCookie('', 0, new Date(0), secure);
}
