import {
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
  UnauthorizedException,
  UseGuards,
  applyDecorators,
} from '@nestjs/common';
import {
  ApiBasicAuth,
  ApiBearerAuth,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
  DocumentBuilder,
} from '@nestjs/swagger';
import { CredentialVerifier, authenticate } from '@castlog/auth';
import { isPossibleUserName } from './auth.request';
import { errorSchema } from './auth.response';
import { FailedCredentials, RateLimitGuard, RateLimiter, RateLimits } from './rate-limit.guard';
import { ApiOutageResponse } from '../http/openapi';
import { TokenCache } from './token-cache';

/** Names of the OpenAPI security schemes (see `addAuthSecuritySchemes`). */
export const BEARER_SCHEME = 'bearer';
export const BASIC_SCHEME = 'basic';
/** The gpodder.net face's session cookie (`sessionid`, from `POST /api/2/auth/{user}/login.json`). */
export const SESSION_SCHEME = 'session';

/** The request as the guards see it: Fastify's, plus the user id CredentialsGuard sets. */
export interface AuthenticatedRequest {
  headers: Record<string, string | string[] | undefined>;
  ip?: string;
  userId?: string;
}

/** Accepts `Authorization: Bearer <token>` (access or CLI token) or `Basic <base64 name:password>`
 * and puts the user id on `request.userId`; anything else is 401 `User not authorized`. Credentials
 * that fail count against the client address (RATE_LIMIT_PER_MINUTE): past the limit, requests
 * with credentials from that address answer 429 before any password is checked, which bounds
 * password guessing and the scrypt work it costs. A request without credentials costs nothing and
 * is not counted. */
@Injectable()
export class CredentialsGuard implements CanActivate {
  constructor(
    @Inject(TokenCache) private readonly tokens: TokenCache,
    @Inject(RateLimiter) private readonly limiter: RateLimits,
  ) {}

  /** The store, except that known tokens and recently verified Basic credentials need no query
   * nor scrypt (TokenCache), and Basic credentials with a name no user can have fail without one. */
  private readonly verifier: CredentialVerifier = {
    authenticateToken: (token, now) => this.tokens.authenticateToken(token, now),
    authenticatePassword: (name, password) =>
      isPossibleUserName(name) ? this.tokens.authenticatePassword(name, password) : Promise.resolve(null),
  };

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    const header =
      typeof request.headers.authorization === 'string' ? request.headers.authorization : undefined;
    const failures = new FailedCredentials(this.limiter, request, header !== undefined);
    await failures.refuseWhileBlocked();
    const userId = await authenticate(this.verifier, header, new Date());
    if (!userId) {
      await failures.failed();
      throw new UnauthorizedException('User not authorized');
    }
    request.userId = userId;
    return true;
  }
}

/** For a controller or route of the API: credentials, then the per-user rate limit, and the
 * matching OpenAPI security requirements and error answers. */
export const Authenticated = () =>
  applyDecorators(
    UseGuards(CredentialsGuard, RateLimitGuard),
    ApiBearerAuth(BEARER_SCHEME),
    ApiBasicAuth(BASIC_SCHEME),
    ApiUnauthorizedResponse({
      description: 'Missing, malformed, expired, revoked or wrong credentials',
      schema: errorSchema('401', 'User not authorized'),
    }),
    ApiTooManyRequestsResponse({
      description: 'Rate limit exceeded; see Retry-After',
      schema: errorSchema('429', 'Too many requests'),
    }),
    ApiOutageResponse(),
  );

/** Declares the `bearer`, `basic` and `session` security schemes the routes refer to. */
export function addAuthSecuritySchemes(builder: DocumentBuilder): DocumentBuilder {
  return builder
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        // Opaque tokens (`cl_…`), not JWTs, whatever the builder's default says.
        bearerFormat: 'opaque',
        description: 'Token from POST /v1/auth/login, /v1/auth/refresh or `castlog tokens issue`',
      },
      BEARER_SCHEME,
    )
    .addBasicAuth({ type: 'http', scheme: 'basic', description: 'User name and password' }, BASIC_SCHEME)
    .addCookieAuth(
      'sessionid',
      {
        type: 'apiKey',
        in: 'cookie',
        name: 'sessionid',
        description:
          'gpodder.net routes (/api/2, /subscriptions) only: the session cookie set by login.json and by every answer to Basic credentials there',
      },
      SESSION_SCHEME,
    );
}
