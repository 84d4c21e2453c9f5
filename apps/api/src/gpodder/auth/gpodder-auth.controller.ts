import { Controller, Header, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { GpodderRoute } from '../gpodder.openapi';
import {
  EndsSession,
  GpodderAuthenticated,
  GpodderIdentity,
  GpodderReply,
  GpodderRequest,
  GpodderSessions,
  GpodderUser,
  isHttps,
} from './gpodder-auth.guard';
import { clearSessionCookie } from './session-cookie';

const userParam = ApiParam({
  name: 'user',
  description: 'The authenticated user (any other name answers 401)',
  example: 'alice',
});

/** gpodder.net's session routes: login sets the session cookie, logout ends it. Both answer `{}`
 * (gpodder.net answers an empty 200; clients read only the status and the cookie). */
@ApiTags('gpodder')
@Controller('api/2/auth/:user')
@GpodderAuthenticated()
export class GpodderAuthController {
  constructor(@Inject(GpodderSessions) private readonly sessions: GpodderSessions) {}

  @Post('login.json')
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

  @Post('logout.json')
  @GpodderRoute()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @EndsSession()
  @userParam
  @ApiOperation({
    summary: 'Log out (gpodder.net)',
    description:
      'Ends the session the cookie names (later requests with it answer 401) and clears the cookie.',
  })
  @ApiOkResponse({
    description: 'Logged out; Set-Cookie clears the session cookie',
    headers: { 'Set-Cookie': { description: 'sessionid=; Max-Age=0; …' } },
    schema: { type: 'object', additionalProperties: false },
  })
  async logout(
    @Req() request: GpodderRequest,
    @Res({ passthrough: true }) reply: GpodderReply,
    @GpodderUser() user: GpodderIdentity,
  ): Promise<Record<string, never>> {
    await this.sessions.end(request, user);
    clearSessionCookie(reply, isHttps(request));
    return {};
  }
}
