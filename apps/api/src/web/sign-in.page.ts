import { AuthStore } from '@castlog/auth';
import { CONFIG, Config } from '@castlog/config';
import { CastlogRoute, FormBody } from '@castlog/http';
import { Body, Controller, Get, Inject, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FailedCredentials, RateLimiter, RateLimits } from '../auth/rate-limit.guard';
import {
  clearSessionCookie,
  readSessionCookie,
  ReplyWithCookies,
  setBrowserSessionCookie,
  setSessionCookie,
} from '../http/session-cookie';
import { pageHeaders, Pages, seeOther, STYLESHEET } from './pages';
import { isLocalPath, WebErrorFilter } from './web-error.filter';
import {
  checkCsrf,
  newSignInCsrf,
  secureCookies,
  SIGN_IN_CSRF_COOKIE,
  SignedIn,
  Visitor,
  WEB_SESSION_COOKIE,
  type WebVisitor,
} from './web-session';

export const FORM = { formBody: true, invalidInputStatus: 400 } as const;
const HOME = '/web/subscriptions';

/** Signing in and out, the way in (`/`, `/web`) and the stylesheet. */
@ApiExcludeController()
@UseFilters(WebErrorFilter)
@Controller()
export class SignInPage {
  constructor(
    private readonly pages: Pages,
    @Inject(AuthStore) private readonly store: AuthStore,
    @Inject(RateLimiter) private readonly limiter: RateLimits,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  @Get(['/', '/web'])
  home(@Res() reply: FastifyReply) {
    return seeOther(reply, HOME);
  }

  @Get('/web/castlog.css')
  stylesheet(@Res() reply: FastifyReply) {
    return reply
      .type('text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .header('x-content-type-options', 'nosniff')
      .send(STYLESHEET);
  }

  @Get('/web/sign-in')
  form(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('next') next?: unknown) {
    return this.showForm(request, reply, { next: typeof next === 'string' ? next : '' });
  }

  @Post('/web/sign-in')
  @CastlogRoute(FORM)
  async signIn(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Body() form: FormBody) {
    checkCsrf(form, request.cookies?.[SIGN_IN_CSRF_COOKIE] ?? '');
    const name = form.text('name');
    const failures = new FailedCredentials(this.limiter, request, true);
    await failures.refuseWhileBlocked();
    const userId = name === '' ? null : await this.store.authenticatePassword(name, form.text('password'));
    if (!userId) {
      await failures.failed();
      return this.showForm(request, reply, { name, next: form.text('next'), status: 401 });
    }
    const now = new Date();
    const session = await this.store.issueSession(userId, this.config.WEB_SESSION_TTL, now, 'web');
    const cookies = reply as unknown as ReplyWithCookies;
    setSessionCookie(
      cookies,
      session.token,
      session.expiresAt,
      now,
      secureCookies(this.config),
      WEB_SESSION_COOKIE,
    );
    clearSessionCookie(cookies, secureCookies(this.config), SIGN_IN_CSRF_COOKIE);
    const next = form.text('next');
    return seeOther(reply, isLocalPath(next) ? next : HOME);
  }

  @Post('/web/sign-out')
  @CastlogRoute(FORM)
  @SignedIn()
  async signOut(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply) {
    await this.store.endSession(visitor.session, visitor.userId, 'web');
    clearSessionCookie(reply as unknown as ReplyWithCookies, secureCookies(this.config), WEB_SESSION_COOKIE);
    return seeOther(reply, '/web/sign-in');
  }

  /** The sign-in form, with the double-submit token of the request's cookie (a new one set when
   * it has none). A visitor already signed in goes home. */
  private async showForm(
    request: FastifyRequest,
    reply: FastifyReply,
    { name = '', next, status = 200 }: { name?: string; next: string; status?: number },
  ) {
    const session = readSessionCookie(request, WEB_SESSION_COOKIE);
    if (status === 200 && session && (await this.store.sessionOwner(session, new Date(), 'web')))
      return seeOther(reply, HOME);
    let csrf = request.cookies?.[SIGN_IN_CSRF_COOKIE];
    if (!csrf) {
      csrf = newSignInCsrf();
      setBrowserSessionCookie(pageHeaders(reply), SIGN_IN_CSRF_COOKIE, csrf, secureCookies(this.config));
    }
    const error = status === 401 ? 'Wrong user name or password.' : undefined;
    return this.pages.send(
      reply,
      'sign-in',
      { title: 'Sign in', ...(error ? { error } : {}) },
      { csrf, name, next: isLocalPath(next) ? next : '' },
      status,
    );
  }
}
