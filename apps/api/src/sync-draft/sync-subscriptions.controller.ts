import { CONFIG, Config } from '@castlog/config';
import { SyncQuery } from '@castlog/read-model';
import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { NotFound } from '../http/errors';
import { linkTo } from '../http/links';
import { errorSchema } from '../http/openapi';
import { RequestOrigin } from '../http/request-context';
import { ApiQueries, openApiSchema, parseWith } from '../http/schema';
import { SyncDraftAuthenticated } from './client-id.guard';
import { ENTITY_SCHEMA, SUBSCRIPTIONS_PAGE_SCHEMA, SyncDraftRoute } from './sync-draft.openapi';
import { EntityBody, presentEntity, SubscriptionsPageBody } from './sync-draft.presenter';
import { parseSubscriptionsQuery, SUBSCRIPTIONS_QUERY, SYNC_ID_PARAMETER } from './sync-draft.request';

const SUBSCRIPTIONS_PATH = '/api/v1/subscriptions';

/** The sync draft's subscription entities: pages of them in sync_id order, and one by its sync_id. */
@ApiTags('sync draft')
@SyncDraftAuthenticated()
@Controller(SUBSCRIPTIONS_PATH.slice(1))
export class SyncSubscriptionsController {
  constructor(
    @Inject(SyncQuery) private readonly query: SyncQuery,
    @Inject(CONFIG) private readonly config: Pick<Config, 'PUBLIC_URL'>,
  ) {}

  @Get()
  @SyncDraftRoute()
  @ApiOperation({
    summary: 'The subscriptions, a page at a time (sync draft)',
    description: 'Subscribed ones only unless include_unsubscribed=true. Follow next for the next page.',
  })
  @ApiQueries(SUBSCRIPTIONS_QUERY)
  @ApiOkResponse({ schema: SUBSCRIPTIONS_PAGE_SCHEMA })
  async list(
    @CurrentUser() userId: string,
    @Query() rawQuery: Record<string, unknown>,
    @RequestOrigin() requestOrigin: string,
  ): Promise<SubscriptionsPageBody> {
    const request = parseSubscriptionsQuery(rawQuery);
    const { entities, hasMore } = await this.query.entities(userId, request);
    const last = entities.at(-1);
    const baseUrl = this.config.PUBLIC_URL ?? requestOrigin;
    return {
      results: entities.map(presentEntity),
      has_next: hasMore,
      has_more: hasMore,
      // The cursor is the last entity's sync_id: keyset paging, so entities added or unsubscribed
      // meanwhile shift nothing past it.
      ...(hasMore && last !== undefined
        ? { next: linkTo(baseUrl, SUBSCRIPTIONS_PATH, rawQuery, { since: last.syncId }) }
        : {}),
    };
  }

  @Get(':sync_id')
  @SyncDraftRoute()
  @ApiParam({
    name: 'sync_id',
    description: "The subscription's sync_id",
    schema: openApiSchema(SYNC_ID_PARAMETER),
  })
  @ApiOperation({ summary: 'One subscription, subscribed or not (sync draft)' })
  @ApiOkResponse({ schema: ENTITY_SCHEMA })
  @ApiNotFoundResponse({
    description: 'No such subscription for this user',
    schema: errorSchema('404', 'Resource not found'),
  })
  async get(@CurrentUser() userId: string, @Param('sync_id') syncIdParam: string): Promise<EntityBody> {
    // Not a UUID: 400 (SYNC_ID_PARAMETER says why); a UUID the user has no entity for: 404.
    const entity = await this.query.entity(userId, parseWith(SYNC_ID_PARAMETER, syncIdParam));
    if (entity === null) throw new NotFound();
    return presentEntity(entity);
  }
}
