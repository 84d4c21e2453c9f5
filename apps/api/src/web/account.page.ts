import { AuthStore, InvalidCredentialError, checkPassword } from '@castlog/auth';
import { describeOutcome, LogEvent } from '@castlog/domain';
import { CastlogRoute, FormBody } from '@castlog/http';
import { AccountQuery } from '@castlog/read-model';
import { Body, Controller, Get, Inject, Post, Query, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { shownTime } from './listing';
import { Pages, seeOther } from './pages';
import { FORM } from './sign-in.page';
import { WebErrorFilter } from './web-error.filter';
import { SignedIn, Visitor, type WebVisitor } from './web-session';

const PATH = '/web/account';
/** Changes the account page lists; `castlog history` shows them all, each request in full. */
export const LATEST_CHANGES = 50;

/** Each kind of request as the page names it. */
const REQUESTS: Readonly<Record<LogEvent['type'], string>> = {
  SubscriptionsAddRequested: 'Podcasts added',
  SubscriptionUpdateRequested: 'Subscription changed',
  DeletionRequested: 'Deletion asked for',
  DeletionCompleted: 'Deletion finished',
  DeletionFailed: 'Deletion failed',
  DeviceUpdateRequested: 'Device saved',
  GpodderUploadRequested: 'Subscriptions uploaded by an app',
  EpisodeActionsUploaded: 'Episode actions uploaded',
  SyncActionsPosted: 'Sync from an app',
  FeedMoved: 'Feed moved by its publisher',
  SettingsUpdateRequested: 'App settings saved',
};

/** The account: a new password (every other session ends), and the latest changes in the log. */
@ApiExcludeController()
@UseFilters(WebErrorFilter)
@SignedIn()
@Controller(PATH)
export class AccountPage {
  constructor(
    private readonly pages: Pages,
    private readonly account: AccountQuery,
    @Inject(AuthStore) private readonly store: AuthStore,
  ) {}

  @Get()
  show(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply, @Query('done') done?: unknown) {
    const notice =
      done === 'password'
        ? 'Password changed. Every other sign-in has ended; apps using your password need the new one.'
        : undefined;
    return this.render(reply, visitor, notice ? { notice } : {});
  }

  @Post('password')
  @CastlogRoute(FORM)
  async changePassword(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply, @Body() form: FormBody) {
    const next = form.text('new_password');
    if (next !== form.text('confirm_password'))
      return this.render(reply, visitor, { error: 'The new password and its confirmation differ.' }, 400);
    try {
      checkPassword(next);
    } catch (error) {
      if (error instanceof InvalidCredentialError)
        return this.render(reply, visitor, { error: error.message }, 400);
      throw error;
    }
    const changed = await this.store.changePassword(
      visitor.userId,
      form.text('current_password'),
      next,
      visitor.session,
    );
    if (!changed) return this.render(reply, visitor, { error: 'The current password is wrong.' }, 400);
    return seeOther(reply, `${PATH}?done=password`);
  }

  private async render(
    reply: FastifyReply,
    visitor: WebVisitor,
    view: { notice?: string; error?: string },
    status = 200,
  ) {
    const changes = await this.account.latestChanges(visitor.userId, LATEST_CHANGES);
    return this.pages.send(
      reply,
      'account',
      { title: 'Account', section: PATH, visitor, ...view },
      {
        userName: visitor.userName,
        changes: changes.map((change) => ({
          request: REQUESTS[change.type] ?? change.type,
          result: describeOutcome(change.outcome),
          ...shownTime(change.instant),
        })),
      },
      status,
    );
  }
}
