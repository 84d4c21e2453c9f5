import { AppPasswordAlreadyCreatedError, AuthStore, InvalidCredentialError, isUuid } from '@castlog/auth';
import { CastlogRoute, FormBody, NotFound } from '@castlog/http';
import { Body, Controller, Get, Inject, Param, Post, Query, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import { shownTime } from './listing';
import { Pages, seeOther } from './pages';
import { FORM } from './sign-in.page';
import { WebErrorFilter } from './web-error.filter';
import { SignedIn, Visitor, type WebVisitor } from './web-session';

const PATH = '/web/app-passwords';

/** App passwords: one per app, the Basic password on the gpodder.net face and `/v1`, shown once
 * when created, revoked here. Each showing of the form carries an id of its own, so the same form
 * sent again (a reload of the page that shows the new password) creates nothing. */
@ApiExcludeController()
@UseFilters(WebErrorFilter)
@SignedIn()
@Controller(PATH)
export class AppPasswordsPage {
  constructor(
    private readonly pages: Pages,
    @Inject(AuthStore) private readonly store: AuthStore,
  ) {}

  @Get()
  show(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply, @Query('done') done?: unknown) {
    return this.render(
      reply,
      visitor,
      done === 'revoked' ? { notice: 'Revoked: that app is signed out.' } : {},
    );
  }

  @Post()
  @CastlogRoute(FORM)
  async create(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply, @Body() form: FormBody) {
    try {
      const formId = form.text('form') || undefined;
      const created = await this.store.createAppPassword(visitor.userId, form.text('name'), formId);
      return this.render(reply, visitor, { created });
    } catch (error) {
      if (error instanceof AppPasswordAlreadyCreatedError)
        return this.render(reply, visitor, {
          notice:
            `This form was sent before: it created the password of ${error.appName}, shown that once. ` +
            'If it was not copied, revoke it and create another.',
        });
      if (!(error instanceof InvalidCredentialError)) throw error;
      return this.render(reply, visitor, { error: error.message, name: form.text('name') }, 400);
    }
  }

  @Post(':id/revoke')
  @CastlogRoute(FORM)
  async revoke(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply, @Param('id') id: string) {
    if (!isUuid(id) || !(await this.store.revokeAppPassword(visitor.userId, id))) throw new NotFound();
    return seeOther(reply, `${PATH}?done=revoked`);
  }

  private async render(
    reply: FastifyReply,
    visitor: WebVisitor,
    view: { created?: { name: string; password: string }; notice?: string; error?: string; name?: string },
    status = 200,
  ) {
    const passwords = await this.store.listAppPasswords(visitor.userId);
    return this.pages.send(
      reply,
      'app-passwords',
      {
        title: 'App passwords',
        section: PATH,
        visitor,
        ...(view.notice ? { notice: view.notice } : {}),
        ...(view.error ? { error: view.error } : {}),
      },
      {
        created: view.created ?? null,
        name: view.name ?? '',
        formId: randomUUID(),
        userName: visitor.userName,
        passwords: passwords.map((entry) => ({
          id: entry.id,
          name: entry.name,
          created: shownTime(entry.createdAt.getTime()).changedText,
          lastUsed: entry.lastUsedAt ? shownTime(entry.lastUsedAt.getTime()).changedText : 'never',
        })),
      },
      status,
    );
  }
}
