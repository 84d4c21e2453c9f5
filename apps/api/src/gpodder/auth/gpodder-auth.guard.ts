import {
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
  UnauthorizedException,
  UseGuards,
  applyDecorators,
  createParamDecorator,
} from '@nestjs/common';
import {
  ApiBasicAuth,
  ApiBearerAuth,
  ApiCookieAuth,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { AuthStore, SESSION_TTL_MS, parseAuthorization } from '@castlog/auth';
import { isPossibleUserName } from '../../auth/auth.request';
import { errorSchema } from '../../auth/auth.response';
import { TooManyRequests } from '../../http/errors';
import { ApiOutageResponse } from '../../http/openapi';
import { BASIC_SCHEME, BEARER_SCHEME, SESSION_SCHEME } from '../../auth/credentials.guard';
import { FailedCredentials, RateLimiter, RateLimits, ReplyWithHeaders } from '../../auth/rate-limit.guard';
import { TokenCache } from '../../auth/token-cache';
import {
  ReplyWithCookies,
  RequestWithCookies,
  readSessionCookie,
  setSessionCookie,
} from '../../http/session-cookie';

/** The challenge on every 401 of the gpodder.net routes: mygpoclient sends Basic credentials only
 * in answer to it. */
export const GPODDER_WWW_AUTHENTICATE = 'Basic realm="castlog"';

/** The user a gpodder.net request is authenticated as. */
export interface GpodderIdentity {
  readonly id: string;
  readonly name: string;
}

/** How the request proved who it is. */
export type GpodderCredential = 'basic' | 'bearer' | 'session';

/** The request as the gpodder guard sees it (Fastify's, its cookies parsed by @fastify/cookie),
 * and what it adds. */
export interface GpodderRequest extends RequestWithCookies {
  headers: Record<string, string | string[] | undefined>;
  params?: Record<string, string | undefined>;
  ip?: string;
  protocol?: string;
  /** Set by the guard, as CredentialsGuard sets it on /v1. */
  userId?: string;
  gpodderUser?: GpodderIdentity;
  gpodderCredential?: GpodderCredential;
  /** The session the response's cookie names, once one is set. */
  gpodderSession?: string;
  /** The app password the Basic credentials carried, if they did: a session issued for the request
   * ends with it. */
  gpodderAppPassword?: string;
}

/** 401 with castlog's error body, after setting `WWW-Authenticate: Basic realm="castlog"` on the
 * reply (the error filter keeps a challenge already set). */
export function gpodderUnauthorized(reply: ReplyWithHeaders): UnauthorizedException {
  reply.header('WWW-Authenticate', GPODDER_WWW_AUTHENTICATE);
  return new UnauthorizedException('User not authorized');
}

/** The reply as the gpodder guard sees it (Fastify's, with @fastify/cookie's `setCookie`). */
export type GpodderReply = ReplyWithHeaders & ReplyWithCookies;

/** Session cookies of the gpodder.net face, kept server-side (AuthStore sessions) so that they hold
 * across API replicas. */
@Injectable()
export class GpodderSessions {
  constructor(
    @Inject(AuthStore) private readonly store: AuthStore,
    @Inject(TokenCache) private readonly tokens: TokenCache,
    @Inject(RateLimiter) private readonly limiter: RateLimits,
  ) {}

  /** Sets the session cookie on the reply: the request's own session when it is a live one of
   * this user (no new row), otherwise a new session, bound to the app password the request's
   * Basic credentials carried, if any (revoking it ends the session). Once per request. */
  async keep(
    request: GpodderRequest,
    reply: GpodderReply,
    user: GpodderIdentity,
    now: Date = new Date(),
  ): Promise<void> {
    if (request.gpodderSession !== undefined) return;
    const cookie = readSessionCookie(request);
    const current = cookie === undefined ? null : await this.tokens.sessionOwner(cookie, now);
    const session =
      cookie !== undefined && current?.userId === user.id
        ? { token: cookie, expiresAt: current.expiresAt }
        : await this.store.issueSession(user.id, SESSION_TTL_MS, now, 'session', request.gpodderAppPassword);
    this.send(request, reply, session, now);
  }

  /** Sets `session`'s cookie on the reply, with the session's expiry; `keep` then adds no other. */
  send(
    request: GpodderRequest,
    reply: GpodderReply,
    session: { token: string; expiresAt: Date },
    now: Date,
  ): void {
    setSessionCookie(reply, session.token, session.expiresAt, now, isHttps(request));
    request.gpodderSession = session.token;
  }

  /** Logout as gpodder.net documents it, by the cookie alone: the session it names ends when it is
   * one of `userName`'s (this process refuses it from now on, other replicas once PostgreSQL's
   * notice reaches them); without a cookie, or with one naming no live session, the client is
   * logged out already. A live session of another user is kept: `other-user`. A cookie naming no
   * live session counts as failed credentials of the client's address (see GpodderAuthGuard), and
   * a blocked address is refused (429) before any cookie is looked up. Credentials in an
   * Authorization header are not read: ending a session takes its cookie, nothing else. */
  async logout(
    request: GpodderRequest,
    userName: string,
    now: Date = new Date(),
  ): Promise<'ended' | 'logged-out' | 'other-user'> {
    const cookie = readSessionCookie(request);
    if (cookie === undefined) return 'logged-out';
    const failures = new FailedCredentials(this.limiter, request, true);
    await failures.refuseWhileBlocked();
    const owner = await this.tokens.sessionOwner(cookie, now);
    if (owner === null) {
      await failures.failed();
      return 'logged-out';
    }
    if (owner.userName !== userName) return 'other-user';
    await this.store.endSession(cookie, owner.userId);
    this.tokens.forgetToken(cookie);
    return 'ended';
  }
}

export const isHttps = (request: GpodderRequest): boolean => request.protocol === 'https';

/** Authenticates a gpodder.net request by `Authorization: Basic` (castlog user name and password,
 * the user's own or an app password), `Authorization: Bearer` (access or CLI token, as on /v1),
 * or the session cookie when there is no Authorization header; the route's `:user` must be the
 * authenticated user's name. Anything else is 401 with castlog's error body and
 * `WWW-Authenticate: Basic realm="castlog"`. A request authenticated by Basic gets the session
 * cookie in its response, as on gpodder.net; one authenticated by the cookie gets it again with the
 * session's expiry, which use renews. Then the per-user rate limit, shared with /v1 (429 with
 * Retry-After, the cookie kept). Failed credentials count against the client address as on /v1: past RATE_LIMIT_PER_MINUTE
 * failures, requests with credentials answer 429 before any password is checked. */
@Injectable()
export class GpodderAuthGuard implements CanActivate {
  constructor(
    @Inject(TokenCache) private readonly tokens: TokenCache,
    @Inject(RateLimiter) private readonly limiter: RateLimits,
    @Inject(GpodderSessions) private readonly sessions: GpodderSessions,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<GpodderRequest>();
    const reply = http.getResponse<GpodderReply>();
    const now = new Date();
    const header =
      typeof request.headers.authorization === 'string' ? request.headers.authorization : undefined;
    const cookie = readSessionCookie(request);
    const failures = new FailedCredentials(
      this.limiter,
      request,
      header !== undefined || cookie !== undefined,
    );
    await failures.refuseWhileBlocked();
    const pathUser = request.params?.user;
    const proven = typeof pathUser === 'string' ? await this.identify(header, cookie, pathUser, now) : null;
    if (!proven || proven.user.name !== pathUser) {
      await failures.failed();
      throw gpodderUnauthorized(reply);
    }
    const { user, credential, sessionExpiresAt, appPasswordId } = proven;
    request.userId = user.id;
    request.gpodderUser = user;
    request.gpodderCredential = credential;
    if (appPasswordId !== undefined) request.gpodderAppPassword = appPasswordId;
    // Before the rate limit: a 429 to a Basic request carries the cookie too, so that the client
    // need not spend one of its few password answers on the next request.
    if (credential === 'basic') await this.sessions.keep(request, reply, user, now);
    // The cookie's own expiry follows the session's, which use renews (AuthStore.sessionOwner).
    if (sessionExpiresAt !== undefined && cookie !== undefined)
      this.sessions.send(request, reply, { token: cookie, expiresAt: sessionExpiresAt }, now);
    const retryAfterSeconds = await this.limiter.take(`user:${user.id}`);
    if (retryAfterSeconds > 0) throw new TooManyRequests(retryAfterSeconds);
    return true;
  }

  /** Who the credentials prove, or null. The Authorization header decides when there is one;
   * Basic credentials naming another user than the path are refused without a password check. */
  private async identify(
    header: string | undefined,
    cookie: string | undefined,
    pathUser: string,
    now: Date,
  ): Promise<{
    user: GpodderIdentity;
    credential: GpodderCredential;
    sessionExpiresAt?: Date;
    appPasswordId?: string;
  } | null> {
    if (header !== undefined) {
      const credentials = parseAuthorization(header);
      if (!credentials) return null;
      if (credentials.kind === 'bearer') {
        const owner = await this.tokens.tokenOwner(credentials.token, now);
        return owner ? { user: { id: owner.userId, name: owner.userName }, credential: 'bearer' } : null;
      }
      if (credentials.name !== pathUser || !isPossibleUserName(credentials.name)) return null;
      const owner = await this.tokens.authenticateBasic(credentials.name, credentials.password, now);
      if (!owner) return null;
      const { userId: id, appPasswordId } = owner;
      return { user: { id, name: credentials.name }, credential: 'basic', appPasswordId };
    }
    if (cookie === undefined) return null;
    const owner = await this.tokens.sessionOwner(cookie, now);
    return owner
      ? {
          user: { id: owner.userId, name: owner.userName },
          credential: 'session',
          sessionExpiresAt: owner.expiresAt,
        }
      : null;
  }
}

/** For a gpodder.net controller or route whose path has `:user`: the gpodder guard (see
 * GpodderAuthGuard) and the matching OpenAPI security requirements and error answers. */
export const GpodderAuthenticated = () =>
  applyDecorators(
    UseGuards(GpodderAuthGuard),
    ApiBasicAuth(BASIC_SCHEME),
    ApiBearerAuth(BEARER_SCHEME),
    ApiCookieAuth(SESSION_SCHEME),
    ApiUnauthorizedResponse({
      description: 'Missing, malformed, expired, revoked or wrong credentials, or a path naming another user',
      headers: {
        'WWW-Authenticate': {
          description: 'The Basic challenge',
          schema: { type: 'string', example: GPODDER_WWW_AUTHENTICATE },
        },
      },
      schema: errorSchema('401', 'User not authorized'),
    }),
    ApiTooManyRequestsResponse({
      description: 'Rate limit exceeded; see Retry-After',
      schema: errorSchema('429', 'Too many requests'),
    }),
    ApiOutageResponse(),
  );

/** The authenticated user `{ id, name }`, set by GpodderAuthGuard. A route without the guard
 * answers 401 rather than running without a user. */
export const GpodderUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): GpodderIdentity => {
    const http = context.switchToHttp();
    const { gpodderUser } = http.getRequest<GpodderRequest>();
    if (!gpodderUser) throw gpodderUnauthorized(http.getResponse<ReplyWithHeaders>());
    return gpodderUser;
  },
);
