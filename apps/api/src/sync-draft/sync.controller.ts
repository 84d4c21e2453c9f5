import { CONFIG, Config } from '@castlog/config';
import { Micros, toIsoMicros } from '@castlog/domain';
import { SyncQuery } from '@castlog/read-model';
import { Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppendService } from '../append/append.service';
import { CurrentUser } from '../auth/current-user.decorator';
import { linkTo } from '../http/links';
import { ApiWriteErrors } from '../http/openapi';
import { RequestId, RequestOrigin } from '../http/request-context';
import { ApiQueries, openApiSchema } from '../http/schema';
import { CurrentClient, SyncDraftAuthenticated } from './client-id.guard';
import { SYNC_PAGE_SCHEMA, SYNC_RESULTS_SCHEMA, SyncDraftRoute } from './sync-draft.openapi';
import { presentChange, presentResults, SyncPageBody, SyncResultsBody } from './sync-draft.presenter';
import { parsePostSync, parseSyncQuery, POST_SYNC, SYNC_QUERY } from './sync-draft.request';

const SYNC_PATH = '/api/v1/sync';

/** The sync draft's endpoint: a batch of actions in, the entities changed since a cursor out. */
@ApiTags('sync draft')
@SyncDraftAuthenticated()
@Controller(SYNC_PATH.slice(1))
export class SyncController {
  constructor(
    @Inject(SyncQuery) private readonly query: SyncQuery,
    @Inject(AppendService) private readonly append: AppendService,
    @Inject(CONFIG) private readonly config: Pick<Config, 'PUBLIC_URL'>,
  ) {}

  @Post()
  @HttpCode(200)
  @SyncDraftRoute()
  @ApiOperation({
    summary: 'Send up to 30 actions (sync draft)',
    description:
      'One request is one event: each action is judged alone (last write wins per part, by occurred_at; a seen ' +
      'action_id answers its first status), and the answer comes once they have applied.',
  })
  @ApiBody({ schema: openApiSchema(POST_SYNC) })
  @ApiOkResponse({ schema: SYNC_RESULTS_SCHEMA })
  @ApiWriteErrors(true)
  async post(
    @CurrentUser() userId: string,
    @CurrentClient() clientId: string,
    @RequestId() requestId: string,
    @Body() body: unknown,
  ): Promise<SyncResultsBody> {
    const actions = parsePostSync(body);
    const outcome = await this.append.request(
      { type: 'SyncActionsPosted', userId, clientId, actions },
      requestId,
    );
    return presentResults(outcome.results);
  }

  @Get()
  @SyncDraftRoute()
  @ApiOperation({
    summary: 'The entities changed since a cursor (sync draft)',
    description:
      'The cursor is when castlog applied a change, so a change a client uploads late still reaches the others. ' +
      'Follow next_since to page on, and later to get what changed since.',
  })
  @ApiQueries(SYNC_QUERY)
  @ApiOkResponse({ schema: SYNC_PAGE_SCHEMA })
  async changes(
    @CurrentUser() userId: string,
    @CurrentClient() clientId: string,
    @Query() rawQuery: Record<string, unknown>,
    @RequestOrigin() requestOrigin: string,
  ): Promise<SyncPageBody> {
    const { since, limit, includeOwn } = parseSyncQuery(rawQuery);
    const page = await this.query.changes(userId, {
      since,
      limit,
      excludeClientId: includeOwn ? null : clientId,
    });
    const baseUrl = this.config.PUBLIC_URL ?? requestOrigin;
    const link = (cursor: Micros | null) =>
      linkTo(baseUrl, SYNC_PATH, rawQuery, { since: cursor === null ? undefined : toIsoMicros(cursor) });
    const last = page.changes.at(-1);
    return {
      results: page.changes.map(presentChange),
      has_more: page.hasMore,
      has_next: page.hasMore,
      // On every page with results, whether more follow or not: followed later, it gives what
      // changed since. An empty page leaves the client's since as it was.
      ...(last === undefined ? {} : { next_since: link(last.cursor) }),
      ...(page.previousSince === undefined ? {} : { previous_since: link(page.previousSince) }),
    };
  }
}
