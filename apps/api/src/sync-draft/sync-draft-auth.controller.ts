import { AccessTokenResponse, AuthStore } from '@castlog/auth';
import { CONFIG, type Config } from '@castlog/config';
import {
  Body,
  Controller,
  Header,
  HttpCode,
  Inject,
  Post,
  UnauthorizedException,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBody,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { LOGIN_REQUEST, parseLoginRequest, parseRefreshRequest, REFRESH_REQUEST } from '../auth/auth.request';
import { RateLimitGuard } from '../auth/rate-limit.guard';
import { ApiOutageResponse, errorSchema } from '../http/openapi';
import { openApiSchema } from '../http/schema';
import { ACCESS_TOKEN_SCHEMA, LOGIN_SCHEMA, SyncDraftRoute } from './sync-draft.openapi';
import { LoginBody, presentLogin } from './sync-draft.presenter';

/** The sync draft's token endpoints, beside /v1's (same users, same tokens, same lifetimes): a login
 * answers when its refresh token expires, and a refresh buys an access token without using the
 * refresh token up. The tokens work on every face. No credentials; rate-limited per client
 * address; no Client-ID needed. */
@ApiTags('sync draft')
@Controller('auth')
@UseGuards(RateLimitGuard)
@ApiTooManyRequestsResponse({
  description: 'Rate limit exceeded; see Retry-After',
  schema: errorSchema('429', 'Too many requests'),
})
@ApiOutageResponse()
export class SyncDraftAuthController {
  constructor(
    @Inject(AuthStore) private readonly store: AuthStore,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  @Post('login')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @SyncDraftRoute()
  @ApiOperation({
    summary: 'Log in (sync draft)',
    description:
      'Exchanges a user name and password for an access token and a refresh token, as POST /v1/auth/login, ' +
      'with the refresh token expiry and endpoint.',
  })
  @ApiBody({ schema: openApiSchema(LOGIN_REQUEST) })
  @ApiOkResponse({ schema: LOGIN_SCHEMA })
  @ApiUnauthorizedResponse({
    description: 'Wrong user name or password (the answer does not say which)',
    schema: errorSchema('401', 'User not authorized'),
  })
  async login(@Body() body: unknown): Promise<LoginBody> {
    const { username, password } = parseLoginRequest(body);
    const issued = await this.store.issueLogin(
      username,
      password,
      this.config.ACCESS_TOKEN_TTL,
      this.config.REFRESH_TOKEN_TTL,
    );
    if (!issued) throw new UnauthorizedException('User not authorized');
    return presentLogin(issued);
  }

  @Post('refresh')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @SyncDraftRoute()
  @ApiOperation({
    summary: 'Refresh the access token (sync draft)',
    description:
      'Exchanges a refresh token for a new access token. The refresh token stays valid until it expires or is revoked.',
  })
  @ApiBody({ schema: openApiSchema(REFRESH_REQUEST) })
  @ApiOkResponse({ schema: ACCESS_TOKEN_SCHEMA })
  @ApiUnauthorizedResponse({
    description: 'Unknown, expired or revoked refresh token',
    schema: errorSchema('401', 'User not authorized'),
  })
  async refresh(@Body() body: unknown): Promise<AccessTokenResponse> {
    const { refresh_token } = parseRefreshRequest(body);
    const tokens = await this.store.refreshAccess(refresh_token, this.config.ACCESS_TOKEN_TTL);
    if (!tokens) throw new UnauthorizedException('User not authorized');
    return tokens;
  }
}
