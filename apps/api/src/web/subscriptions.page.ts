import { isGuid, normalizeGuid } from '@castlog/domain';
import { FeedCatalog } from '@castlog/feeds';
import { CastlogRoute, FormBody, NotFound } from '@castlog/http';
import { AccountQuery, AccountSubscription, SubscriptionFilter } from '@castlog/read-model';
import { Body, Controller, Get, Inject, Param, Post, Query, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AppendService } from '../append/append.service';
import { RequestId } from '../http/request-context';
import { parseAddItems } from '../subscriptions/subscriptions.request';
import { Pages, seeOther } from './pages';
import { FeedTitles } from './feed-titles';
import { FORM } from './sign-in.page';
import { pagerOf, pageNumber, shownTime } from './listing';
import { WebErrorFilter } from './web-error.filter';
import { SignedIn, Visitor, type WebVisitor } from './web-session';

/** Subscriptions a page shows: as many as `/v1` answers in one page. */
export const SUBSCRIPTIONS_PER_PAGE = 100;
const PATH = '/web/subscriptions';
/** What the page says after each action (the redirect names it by key). */
const DONE: Readonly<Record<string, string>> = {
  added: 'Subscribed.',
  unsubscribed: 'Unsubscribed.',
  resubscribed: 'Subscribed again.',
  deleting: 'Deletion requested: it finishes in the background and the podcast then leaves the list.',
};

/** The subscriptions page: every subscription, newest change first, filtered by name or URL; a
 * feed added, unsubscribed, resubscribed or deleted through the same requests as `/v1`'s. */
@ApiExcludeController()
@UseFilters(WebErrorFilter)
@SignedIn()
@Controller(PATH)
export class SubscriptionsPage {
  constructor(
    private readonly pages: Pages,
    private readonly account: AccountQuery,
    @Inject(FeedCatalog) private readonly catalog: FeedCatalog,
    private readonly append: AppendService,
    private readonly titles: FeedTitles,
  ) {}

  @Get()
  async show(
    @Visitor() visitor: WebVisitor,
    @Res() reply: FastifyReply,
    @Query() query: Record<string, unknown>,
  ) {
    const notice = typeof query.done === 'string' ? DONE[query.done] : undefined;
    return this.render(reply, visitor, {
      filter: typeof query.filter === 'string' ? query.filter.trim().slice(0, 200) : '',
      page: pageNumber(query.page),
      ...(notice ? { notice } : {}),
    });
  }

  @Post()
  @CastlogRoute(FORM)
  async add(
    @Visitor() visitor: WebVisitor,
    @RequestId() requestId: string,
    @Res() reply: FastifyReply,
    @Body() form: FormBody,
  ) {
    const feedUrl = form.text('feed_url').trim();
    const items = parseAddItems({ subscriptions: [{ feed_url: feedUrl }] });
    const outcome = await this.append.request(
      { type: 'SubscriptionsAddRequested', userId: visitor.userId, items },
      requestId,
    );
    const failure = outcome.failure[0];
    if (!failure) return seeOther(reply, `${PATH}?done=added`);
    return this.render(reply, visitor, { page: 1, filter: '', feedUrl, error: failure.message }, 400);
  }

  @Post(':guid/:action')
  @CastlogRoute(FORM)
  async change(
    @Visitor() visitor: WebVisitor,
    @RequestId() requestId: string,
    @Res() reply: FastifyReply,
    @Param('guid') guidParam: string,
    @Param('action') action: string,
  ) {
    if (!isGuid(guidParam)) throw new NotFound();
    const guid = normalizeGuid(guidParam);
    const userId = visitor.userId;
    if (action === 'delete') {
      const outcome = await this.append.request({ type: 'DeletionRequested', userId, guid }, requestId);
      if (outcome.kind === 'NotFound') throw new NotFound();
      return seeOther(reply, `${PATH}?done=deleting`);
    }
    if (action !== 'unsubscribe' && action !== 'resubscribe') throw new NotFound();
    const isSubscribed = action === 'resubscribe';
    const outcome = await this.append.request(
      { type: 'SubscriptionUpdateRequested', userId, guid, isSubscribed },
      requestId,
    );
    if (outcome.kind === 'NotFound' || outcome.kind === 'Gone') throw new NotFound();
    return seeOther(reply, `${PATH}?done=${isSubscribed ? 'resubscribed' : 'unsubscribed'}`);
  }

  private async render(
    reply: FastifyReply,
    visitor: WebVisitor,
    view: { filter: string; page: number; feedUrl?: string; notice?: string; error?: string },
    status = 200,
  ) {
    const filter: SubscriptionFilter | null =
      view.filter === ''
        ? null
        : { text: view.filter, urls: await this.catalog.urlsTitled(visitor.userId, view.filter) };
    const offset = (view.page - 1) * SUBSCRIPTIONS_PER_PAGE;
    const listing = await this.account.subscriptions(visitor.userId, filter, {
      offset,
      limit: SUBSCRIPTIONS_PER_PAGE,
    });
    const titles = await this.titles.of(listing.items.map((item) => item.feedUrl));
    const query = view.filter === '' ? '' : `filter=${encodeURIComponent(view.filter)}&`;
    return this.pages.send(
      reply,
      'subscriptions',
      {
        title: 'Subscriptions',
        section: PATH,
        visitor,
        ...(view.notice ? { notice: view.notice } : {}),
        ...(view.error ? { error: view.error } : {}),
      },
      {
        filter: view.filter,
        feedUrl: view.feedUrl ?? '',
        summary: summaryOf(listing.total, view.filter),
        rows: listing.items.map((item) => rowOf(item, titles.get(item.feedUrl))),
        pager: pagerOf(`${PATH}?${query}`, view.page, listing.total, SUBSCRIPTIONS_PER_PAGE),
      },
      status,
    );
  }
}

function summaryOf(total: number, filter: string): string {
  const count = `${total} podcast${total === 1 ? '' : 's'}`;
  if (filter !== '') return `${count} match “${filter}”.`;
  return total === 0 ? 'No podcasts yet: add one above, or import an OPML file.' : `${count}.`;
}

function rowOf(item: AccountSubscription, title: string | undefined) {
  const deleting = item.deletion === 'PENDING';
  return {
    guid: item.guid,
    feedUrl: item.feedUrl,
    title: title ?? '',
    isSubscribed: item.isSubscribed,
    deleting,
    status: deleting
      ? 'Being deleted'
      : item.deletion === 'FAILURE'
        ? 'Deletion failed'
        : item.isSubscribed
          ? 'Subscribed'
          : 'Unsubscribed',
    ...shownTime(item.changed),
  };
}
