import type { CookieSerializeOptions } from '@fastify/cookie';

/** The gpodder.net session cookie's name, as gpodder.net (Django) names it; the default of the
 * functions below, which the web pages' sign-in cookie (WEB_SESSION_COOKIE) uses too. */
export const SESSION_COOKIE = 'sessionid';

/** A request as @fastify/cookie leaves it: its Cookie header parsed into `cookies`. */
export interface RequestWithCookies {
  cookies?: Record<string, string | undefined> | null;
}

/** A reply with @fastify/cookie's `setCookie`, whose `Set-Cookie` goes out with any answer, errors
 * included. */
export interface ReplyWithCookies {
  setCookie(name: string, value: string, options: CookieSerializeOptions): unknown;
}

/** The session cookie of the request, or undefined when there is none (the first one counts, as
 * @fastify/cookie reads them). A value in double quotes (RFC 6265 §4.1.1) counts without them. */
export function readSessionCookie(
  request: RequestWithCookies,
  name: string = SESSION_COOKIE,
): string | undefined {
  const value = request.cookies?.[name];
  const unquoted =
    value !== undefined && value.length >= 2 && value.startsWith('"') && value.endsWith('"')
      ? value.slice(1, -1)
      : value;
  return unquoted === '' ? undefined : unquoted;
}

/** The cookie's attributes whatever its value: HttpOnly on Path=/ with SameSite=Lax. */
const ATTRIBUTES = { path: '/', httpOnly: true, sameSite: 'lax' } as const;

/** Sets the session cookie for a session that lasts until `expiresAt`, Secure when the request
 * came over HTTPS. */
export function setSessionCookie(
  reply: ReplyWithCookies,
  token: string,
  expiresAt: Date,
  now: Date,
  secure: boolean,
  name: string = SESSION_COOKIE,
): void {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000));
  reply.setCookie(name, token, { ...ATTRIBUTES, maxAge, expires: expiresAt, secure });
}

/** Sets a cookie with the session cookie's attributes that lasts as long as the browser session
 * (no expiry): the sign-in form's double-submit token. */
export function setBrowserSessionCookie(
  reply: ReplyWithCookies,
  name: string,
  value: string,
  secure: boolean,
): void {
  reply.setCookie(name, value, { ...ATTRIBUTES, secure });
}

/** Makes the client drop the session cookie: an empty value that has already expired. */
export function clearSessionCookie(
  reply: ReplyWithCookies,
  secure: boolean,
  name: string = SESSION_COOKIE,
): void {
  reply.setCookie(name, '', { ...ATTRIBUTES, maxAge: 0, expires: new Date(0), secure });
}
