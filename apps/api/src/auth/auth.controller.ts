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
  ApiMethodNotAllowedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { AuthStore } from '@castlog/auth';
import { CONFIG, type Config } from '@castlog/config';
import { openApiSchema } from '../http/schema';
import { LOGIN_REQUEST, REFRESH_REQUEST, parseLoginRequest, parseRefreshRequest } from './auth.request';
import { ApiOutageResponse } from '../http/openapi';
import { TokenResponse, errorSchema } from './auth.response';
import { RateLimitGuard } from './rate-limit.guard';

const unauthorized = () => new UnauthorizedException('User not authorized');

/** Token endpoints. No credentials needed; rate-limited per client address. */
@ApiTags('auth')
@Controller('v1/auth')
@UseGuards(RateLimitGuard)
@ApiMethodNotAllowedResponse({
  description: 'The body is not an object of the documented shape',
  schema: errorSchema('405', 'Input could not be validated: username must be a string'),
})
@ApiTooManyRequestsResponse({
  description: 'Rate limit exceeded; see Retry-After',
  schema: errorSchema('429', 'Too many requests'),
})
@ApiOutageResponse()
export class AuthController {
  constructor(
    @Inject(AuthStore) private readonly store: AuthStore,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  @Post('login')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Log in',
    description: 'Exchanges a user name and password for an access token and a refresh token.',
  })
  @ApiBody({ schema: openApiSchema(LOGIN_REQUEST) })
  @ApiOkResponse({ type: TokenResponse })
  @ApiUnauthorizedResponse({
    description: 'Wrong user name or password (the answer does not say which)',
    schema: errorSchema('401', 'User not authorized'),
  })
  async login(@Body() body: unknown): Promise<TokenResponse> {
    const { username, password } = parseLoginRequest(body);
    const tokens = await this.store.login(
      username,
      password,
      this.config.ACCESS_TOKEN_TTL,
      this.config.REFRESH_TOKEN_TTL,
    );
    if (!tokens) throw unauthorized();
    return tokens;
  }

  @Post('refresh')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Refresh tokens',
    description:
      'Exchanges a refresh token for a new access token and a new refresh token. The refresh token used is revoked.',
  })
  @ApiBody({ schema: openApiSchema(REFRESH_REQUEST) })
  @ApiOkResponse({ type: TokenResponse })
  @ApiUnauthorizedResponse({
    description: 'Unknown, expired, revoked or already used refresh token',
    schema: errorSchema('401', 'User not authorized'),
  })
  async refresh(@Body() body: unknown): Promise<TokenResponse> {
    const { refresh_token } = parseRefreshRequest(body);
    const tokens = await this.store.refresh(
      refresh_token,
      this.config.ACCESS_TOKEN_TTL,
      this.config.REFRESH_TOKEN_TTL,
    );
    if (!tokens) throw unauthorized();
    return tokens;
  }
}
