import { AuthStore } from '@castlog/auth';
import { TokenCache } from '../auth/token-cache';
import { Config } from '@castlog/config';
import { FormBody, Forbidden } from '@castlog/http';
import {
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  UseGuards,
  applyDecorators,
} from '@nestjs/common';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { RateLimitGuard } from '../auth/rate-limit.guard';
import { readSessionCookie, RequestWithCookies } from '../http/session-cookie';

/** The web pages' sign-in cookie: a session of kind `web` (never a gpodder.net session). */
export const WEB_SESSION_COOKIE = 'castlog_web';
/** Before sign-in, the form's CSRF token is the value of this cookie (a double submit). */
export const SIGN_IN_CSRF_COOKIE = 'castlog_csrf';
/** Every form's field carrying its CSRF token. */
export const CSRF_FIELD = 'csrf';

/** Who is signed in to the pages, on `request.web` once WebSessionGuard let the request through. */
export interface WebVisitor {
  readonly userId: string;
  readonly userName: string;
  readonly isAdmin: boolean;
  /** The session's token (the cookie's value). */
  readonly session: string;
  /** The token every form of this session carries. */
  readonly csrf: string;
}

interface WebRequest extends RequestWithCookies {
  method: string;
  url: string;
  body?: unknown;
  userId?: string;
  web?: WebVisitor;
}

/** Methods that change nothing: they carry no form, so no CSRF token (HEAD is GET's twin). */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** Thrown for a page that needs a signed-in visitor when there is none: WebErrorFilter answers it
 * with a redirect to the sign-in page. */
export class SignInRequired extends HttpException {
  constructor(readonly returnTo: string) {
    super('sign in required', HttpStatus.UNAUTHORIZED);
  }
}

/** The CSRF token of a session: derived from the session's secret token, so it needs no storage
 * and no other session's page can know it. */
export const csrfOf = (session: string): string =>
  createHash('sha256').update(`castlog-csrf:${session}`).digest('base64url');

/** A new random token for the sign-in form's double submit. */
export const newSignInCsrf = (): string => randomBytes(24).toString('base64url');

/** Whether two tokens are the same, in time that does not depend on where they differ. */
export function sameToken(sent: string, expected: string): boolean {
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

/** Refuses (403) a form whose CSRF field is not `expected`. */
export function checkCsrf(body: unknown, expected: string): void {
  const sent = body instanceof FormBody ? body.text(CSRF_FIELD) : '';
  if (!sameToken(sent, expected)) throw new Forbidden('the form is out of date or came from another site');
}

/** Lets a request through when its cookie names a live web session, and puts the visitor on
 * `request.web` (and its id on `request.userId`, which the per-user rate limit reads). Every POST
 * must carry the session's CSRF token. Without a session: SignInRequired. */
@Injectable()
export class WebSessionGuard implements CanActivate {
  constructor(@Inject(TokenCache) private readonly tokens: TokenCache) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<WebRequest>();
    const session = readSessionCookie(request, WEB_SESSION_COOKIE);
    // TokenCache: a session known to this process costs no query; an ended one is forgotten as
    // soon as PostgreSQL announces it, on every API process.
    const owner = session === undefined ? null : await this.tokens.sessionOwner(session, new Date(), 'web');
    if (!owner || session === undefined)
      throw new SignInRequired(request.method === 'GET' ? request.url : '');
    const csrf = csrfOf(session);
    if (!SAFE_METHODS.has(request.method)) checkCsrf(request.body, csrf);
    request.userId = owner.userId;
    request.web = {
      userId: owner.userId,
      userName: owner.userName,
      isAdmin: owner.isAdmin,
      session,
      csrf,
    };
    return true;
  }
}

/** Only administrators (`castlog users admin <name>`) pass; others get 403. Asked of the store each
 * time: an administrator demoted a moment ago is refused at once, whatever a cache remembers. */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(@Inject(AuthStore) private readonly store: AuthStore) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const visitor = context.switchToHttp().getRequest<WebRequest>().web;
    if (!visitor || !(await this.store.isAdmin(visitor.userId)))
      throw new Forbidden('this page is for administrators');
    return true;
  }
}

/** For a page controller: a signed-in visitor, then the per-user rate limit of the APIs. */
export const SignedIn = () => applyDecorators(UseGuards(WebSessionGuard, RateLimitGuard));

/** For an administration page: SignedIn, then AdminGuard. */
export const AdminOnly = () => applyDecorators(UseGuards(WebSessionGuard, RateLimitGuard, AdminGuard));

/** The visitor WebSessionGuard found. */
export const Visitor = createParamDecorator((_data: unknown, context: ExecutionContext): WebVisitor => {
  const { web } = context.switchToHttp().getRequest<WebRequest>();
  if (!web) throw new SignInRequired('');
  return web;
});

/** Whether the pages' cookies are Secure: PUBLIC_URL says the service is reached over https. */
export const secureCookies = (config: Pick<Config, 'PUBLIC_URL'>): boolean =>
  config.PUBLIC_URL?.startsWith('https:') === true;
