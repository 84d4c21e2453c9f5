import { Controller, Header, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiCookieAuth,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { SESSION_SCHEME } from '../../auth/credentials.guard';
import { ValidationFailed } from '../../http/errors';
import { ApiOutageResponse, errorSchema } from '../../http/openapi';
import { GpodderRoute } from '../gpodder.openapi';
import {
  GpodderAuthenticated,
  GpodderIdentity,
  GpodderReply,
  GpodderRequest,
  GpodderSessions,
  GpodderUser,
  isHttps,
} from './gpodder-auth.guard';
import { clearSessionCookie } from '../../http/session-cookie';

const userParam = ApiParam({
  name: 'user',
  description: 'The authenticated user (any other name answers 401)',
  example: 'alice',
});

/** gpodder.net's session routes: login sets the session cookie, logout ends it. Both answer `{}`
 * (gpodder.net answers an empty 200; clients read only the status and the cookie). */
@ApiTags('gpodder')
@Controller('api/2/auth/:user')
export class GpodderAuthController {
  constructor(@Inject(GpodderSessions) private readonly sessions: GpodderSessions) {}

  @Post('login.json')
  @GpodderAuthenticated()
  @GpodderRoute()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @userParam
  @ApiOperation({
    summary: 'Log in (gpodder.net)',
    description:
      'Sets the session cookie `sessionid` (HttpOnly), which later requests of this user may send instead of credentials. ' +
      'A request that already carries a live session of the user keeps it.',
  })
  @ApiOkResponse({
    description: 'Logged in; Set-Cookie carries the session',
    headers: { 'Set-Cookie': { description: 'sessionid=…; HttpOnly; Path=/; SameSite=Lax' } },
    schema: { type: 'object', additionalProperties: false },
  })
  async login(
    @Req() request: GpodderRequest,
    @Res({ passthrough: true }) reply: GpodderReply,
    @GpodderUser() user: GpodderIdentity,
  ): Promise<Record<string, never>> {
    await this.sessions.keep(request, reply, user);
    return {};
  }

  /** As gpodder.net documents it (its own code answers 400 without a cookie): 200 without a cookie
   * or credentials and when logged out already, 400 for a cookie of another user's session. */
  @Post('logout.json')
  @GpodderRoute()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiParam({ name: 'user', description: 'The user whose session the cookie names', example: 'alice' })
  @ApiCookieAuth(SESSION_SCHEME)
  @ApiOperation({
    summary: 'Log out (gpodder.net)',
    description:
      "Ends the session the cookie names when it is the user's (later requests with it answer 401) and clears " +
      'the cookie. Without a cookie, or with one whose session has ended, the client is logged out already: 200 ' +
      "as well. Only the cookie is read, no credentials. A live session of another user's is 400 and kept.",
    security: [{ [SESSION_SCHEME]: [] }, {}],
  })
  @ApiOkResponse({
    description: 'Logged out; Set-Cookie clears the session cookie',
    headers: { 'Set-Cookie': { description: 'sessionid=; Max-Age=0; …' } },
    schema: { type: 'object', additionalProperties: false },
  })
  @ApiTooManyRequestsResponse({
    description: 'Too many cookies naming no session from this address; see Retry-After',
    schema: errorSchema('429', 'Too many requests'),
  })
  @ApiOutageResponse()
  async logout(
    @Req() request: GpodderRequest,
    @Res({ passthrough: true }) reply: GpodderReply,
    @Param('user') user: string,
  ): Promise<Record<string, never>> {
    const ended = await this.sessions.logout(request, user);
    if (ended === 'other-user')
      throw new ValidationFailed("the session cookie is another user's: log out as that user");
    clearSessionCookie(reply, isHttps(request));
    return {};
  }
}
