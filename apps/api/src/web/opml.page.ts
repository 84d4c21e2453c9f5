import { FailedItem, SubscriptionsAddRequested } from '@castlog/domain';
import { FeedCatalog } from '@castlog/feeds';
import { UPLOAD_BODY_LIMIT_BYTES } from '@castlog/config';
import { CastlogRoute, decodeText, FormBody, TextEncodingError, Unavailable } from '@castlog/http';
import { chunksOf, OpmlError, OpmlFeed, parseOpml, toOpml } from '@castlog/opml';
import { GpodderQuery } from '@castlog/read-model';
import { Body, Controller, Get, Inject, Post, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import { AppendService } from '../append/append.service';
import { RequestId } from '../http/request-context';
import { pageHeaders, Pages } from './pages';
import { FORM } from './sign-in.page';
import { WebErrorFilter } from './web-error.filter';
import { SignedIn, Visitor, type WebVisitor } from './web-session';

const PATH = '/web/opml';
/** Failed feeds the summary names one by one; the rest are counted. */
const LISTED_FAILURES = 50;

interface ImportSummary {
  readonly read: number;
  readonly subscribed: number;
  readonly failures: readonly FailedItem[];
  /** Feeds not yet added when the service became unavailable part way. */
  readonly notReached: number;
}

/** OPML: the subscribed feeds as a file, and a file's feeds added as `/v1` adds them (what
 * `castlog opml import` appends, in the same chunks), with a summary of what was added and what
 * failed and why. */
@ApiExcludeController()
@UseFilters(WebErrorFilter)
@SignedIn()
@Controller(PATH)
export class OpmlPage {
  constructor(
    private readonly pages: Pages,
    private readonly gpodder: GpodderQuery,
    @Inject(FeedCatalog) private readonly catalog: FeedCatalog,
    private readonly append: AppendService,
  ) {}

  @Get()
  show(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply) {
    return this.pages.send(reply, 'opml', { title: 'OPML', section: PATH, visitor }, { summary: null });
  }

  @Get('export')
  async download(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply) {
    const urls = await this.gpodder.subscribedUrls(visitor.userId);
    const feeds = await this.catalog.withTitles(visitor.userId, urls);
    const document = toOpml(feeds, {
      title: `castlog subscriptions of ${visitor.userName}`,
      dateCreated: new Date(),
    });
    return pageHeaders(reply)
      .type('text/x-opml; charset=utf-8')
      .header('content-disposition', 'attachment; filename="castlog-subscriptions.opml"')
      .send(document);
  }

  @Post('import')
  @CastlogRoute({ ...FORM, bodyLimit: UPLOAD_BODY_LIMIT_BYTES })
  async upload(
    @Visitor() visitor: WebVisitor,
    @RequestId() requestId: string,
    @Res() reply: FastifyReply,
    @Body() form: FormBody,
  ) {
    const frame = { title: 'OPML', section: PATH, visitor };
    const file = form.file('file');
    let feeds: OpmlFeed[];
    try {
      if (!file || file.content.length === 0) throw new OpmlError('choose an OPML file to import');
      feeds = parseOpml(decodeText(file.content)).feeds;
    } catch (error) {
      if (!(error instanceof OpmlError || error instanceof TextEncodingError)) throw error;
      return this.pages.send(reply, 'opml', { ...frame, error: error.message }, { summary: null }, 400);
    }
    const summary = await this.importFeeds(visitor.userId, feeds, requestId);
    return this.pages.send(reply, 'opml', frame, {
      summary: { ...summary, listed: summary.failures.slice(0, LISTED_FAILURES) },
    });
  }

  /** Adds the feeds a chunk at a time, each one request answered once applied. When the log or
   * the projection becomes unavailable part way, what was added stays and the rest is counted: a
   * second import matches the feeds already there instead of adding them again. */
  private async importFeeds(userId: string, feeds: OpmlFeed[], requestId: string): Promise<ImportSummary> {
    let subscribed = 0;
    let done = 0;
    const failures: FailedItem[] = [];
    for (const [index, chunk] of chunksOf(feeds).entries()) {
      const event: SubscriptionsAddRequested = {
        type: 'SubscriptionsAddRequested',
        userId,
        items: chunk.map((feed) => ({ feedUrl: feed.url, candidateGuid: randomUUID() })),
      };
      try {
        const outcome = await this.append.request(event, `${requestId}-${index + 1}`);
        subscribed += outcome.success.length;
        failures.push(...outcome.failure);
      } catch (error) {
        if (!(error instanceof Unavailable) || index === 0) throw error;
        return { read: feeds.length, subscribed, failures, notReached: feeds.length - done };
      }
      done += chunk.length;
    }
    return { read: feeds.length, subscribed, failures, notReached: 0 };
  }
}
