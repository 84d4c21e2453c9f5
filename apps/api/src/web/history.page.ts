import { FeedCatalog } from '@castlog/feeds';
import { AccountQuery, EpisodeActionEntry } from '@castlog/read-model';
import { Controller, Get, Inject, Query, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { pagerOf, pageNumber } from './listing';
import { Pages } from './pages';
import { WebErrorFilter } from './web-error.filter';
import { SignedIn, Visitor, type WebVisitor } from './web-session';

const PATH = '/web/history';
export const ACTIONS_PER_PAGE = 50;

/** The latest episode actions the apps uploaded, newest first, a page at a time. */
@ApiExcludeController()
@UseFilters(WebErrorFilter)
@SignedIn()
@Controller(PATH)
export class HistoryPage {
  constructor(
    private readonly pages: Pages,
    private readonly account: AccountQuery,
    @Inject(FeedCatalog) private readonly catalog: FeedCatalog,
  ) {}

  @Get()
  async show(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply, @Query('page') pageParam?: unknown) {
    const page = pageNumber(pageParam);
    const listing = await this.account.episodeActions(visitor.userId, {
      offset: (page - 1) * ACTIONS_PER_PAGE,
      limit: ACTIONS_PER_PAGE,
    });
    const titles = await this.catalog.titlesFor(visitor.userId, [
      ...new Set(listing.items.map((action) => action.podcast)),
    ]);
    return this.pages.send(
      reply,
      'history',
      { title: 'Listening history', section: PATH, visitor },
      {
        total: listing.total,
        actions: listing.items.map((action) => entryOf(action, titles.get(action.podcast))),
        pager: pagerOf(`${PATH}?`, page, listing.total, ACTIONS_PER_PAGE),
      },
    );
  }
}

function entryOf(action: EpisodeActionEntry, title: string | undefined) {
  return {
    podcast: title ?? action.podcast,
    episode: action.episode,
    action: action.action,
    position: action.action === 'play' ? positionText(action.position, action.total) : '',
    device: action.device ?? '',
    time: `${action.timestamp.replace('T', ' ').slice(0, 16)} UTC`,
    timeIso: `${action.timestamp}Z`,
  };
}

/** `12:05 of 45:00`: a play's position (and the episode's length when known). */
function positionText(position: number | null, total: number | null): string {
  if (position === null) return '';
  return total === null ? clock(position) : `${clock(position)} of ${clock(total)}`;
}

const clock = (seconds: number): string => {
  const h = Math.floor(seconds / 3600);
  const m = String(Math.floor((seconds % 3600) / 60)).padStart(h > 0 ? 2 : 1, '0');
  const s = String(seconds % 60).padStart(2, '0');
  return h > 0 ? `${h}:${m}:${s}` : `${m}:${s}`;
};
