import { AuthStore, InvalidCredentialError, UserExistsError, UserNotFoundError } from '@castlog/auth';
import { CastlogRoute, FormBody, NotFound } from '@castlog/http';
import { AccountQuery } from '@castlog/read-model';
import { Body, Controller, Get, Inject, Param, Post, Query, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { shownTime } from './listing';
import { Pages, seeOther } from './pages';
import { FORM } from './sign-in.page';
import { WebErrorFilter } from './web-error.filter';
import { AdminOnly, Visitor, type WebVisitor } from './web-session';

const PATH = '/web/admin';
const DONE: Readonly<Record<string, string>> = {
  added: 'User added.',
  reset: 'Password reset: that user is signed out everywhere.',
  removed: 'User removed.',
};

/** Administration, for users the CLI made administrators: every user with their subscription
 * count; add a user, reset a password, remove a user (what `castlog users` does). */
@ApiExcludeController()
@UseFilters(WebErrorFilter)
@AdminOnly()
@Controller(PATH)
export class AdminPage {
  constructor(
    private readonly pages: Pages,
    private readonly account: AccountQuery,
    @Inject(AuthStore) private readonly store: AuthStore,
  ) {}

  @Get()
  show(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply, @Query('done') done?: unknown) {
    const notice = typeof done === 'string' ? DONE[done] : undefined;
    return this.render(reply, visitor, notice ? { notice } : {});
  }

  @Post('users')
  @CastlogRoute(FORM)
  async add(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply, @Body() form: FormBody) {
    try {
      await this.store.addUser(form.text('name'), form.text('password'), {
        admin: form.text('admin') === 'on',
      });
    } catch (error) {
      if (!(error instanceof InvalidCredentialError || error instanceof UserExistsError)) throw error;
      return this.render(reply, visitor, { error: error.message }, 400);
    }
    return seeOther(reply, `${PATH}?done=added`);
  }

  @Post('users/:name/password')
  @CastlogRoute(FORM)
  async reset(
    @Visitor() visitor: WebVisitor,
    @Res() reply: FastifyReply,
    @Param('name') name: string,
    @Body() form: FormBody,
  ) {
    try {
      await this.store.setPassword({ name }, form.text('password'));
    } catch (error) {
      if (error instanceof UserNotFoundError) throw new NotFound();
      if (!(error instanceof InvalidCredentialError)) throw error;
      return this.render(reply, visitor, { error: error.message }, 400);
    }
    return seeOther(reply, `${PATH}?done=reset`);
  }

  @Post('users/:name/remove')
  @CastlogRoute(FORM)
  async remove(
    @Visitor() visitor: WebVisitor,
    @Res() reply: FastifyReply,
    @Param('name') name: string,
    @Body() form: FormBody,
  ) {
    if (name === visitor.userName)
      return this.render(reply, visitor, { error: 'You cannot remove yourself here.' }, 400);
    if (form.text('confirm') !== 'on')
      return this.render(reply, visitor, { error: `Tick “remove” to confirm removing ${name}.` }, 400);
    if (!(await this.store.removeUser(name))) throw new NotFound();
    return seeOther(reply, `${PATH}?done=removed`);
  }

  private async render(
    reply: FastifyReply,
    visitor: WebVisitor,
    view: { notice?: string; error?: string },
    status = 200,
  ) {
    const [users, counts] = await Promise.all([this.store.listUsers(), this.account.subscribedCounts()]);
    return this.pages.send(
      reply,
      'admin',
      { title: 'Users', section: PATH, visitor, ...view },
      {
        users: users.map((user) => ({
          name: user.name,
          isAdmin: user.isAdmin,
          isVisitor: user.id === visitor.userId,
          subscriptions: counts.get(user.id) ?? 0,
          created: shownTime(user.createdAt.getTime()).changedText,
        })),
      },
      status,
    );
  }
}
