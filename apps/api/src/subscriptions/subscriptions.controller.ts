import { Config, CONFIG } from '@castlog/config';
import { ActiveProjection, Database, PageCursor, SubscriptionsQuery } from '@castlog/read-model';
import { DATABASE } from '@castlog/runtime';
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiGoneResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { AppendService } from '../append/append.service';
import { Authenticated } from '../auth/credentials.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { DeletionReceiptBody, DELETION_RECEIVED } from '../deletions/deletion.presenter';
import { ApiValidationFailedResponse, ApiWriteErrors, errorSchema } from '../http/openapi';
import { Gone, NotFound } from '../http/errors';
import { guid as guidSchema } from '../http/parse';
import { ApiQueries, openApiSchema, parseWith } from '../http/schema';
import { RequestId, RequestOrigin } from '../http/request-context';
import {
  AddResultBody,
  presentAdded,
  presentSubscription,
  presentGuid,
  presentUpdated,
  SubscriptionBody,
  SubscriptionPageBody,
  UpdateResultBody,
} from './subscription.presenter';
import {
  ADD_SUBSCRIPTIONS,
  formatCursor,
  LIST_QUERY,
  parseAddItems,
  parseListQuery,
  parseUpdate,
  UPDATE_SUBSCRIPTION,
} from './subscriptions.request';

const GUID = guidSchema('guid');
const ApiGuidParam = () =>
  ApiParam({ name: 'guid', description: 'Any guid the subscription has had', schema: openApiSchema(GUID) });

const NOT_FOUND = {
  description: 'No such subscription for this user',
  schema: errorSchema('404', 'Resource not found'),
};
const GONE = {
  description: 'The subscription has been deleted',
  schema: errorSchema('410', 'Subscription has been deleted'),
};

@ApiTags('subscriptions')
@Authenticated()
@Controller('v1/subscriptions')
export class SubscriptionsController {
  private readonly query: SubscriptionsQuery;

  constructor(
    @Inject(DATABASE) database: Database,
    readModel: ActiveProjection,
    private readonly append: AppendService,
    @Inject(CONFIG) private readonly config: Pick<Config, 'PUBLIC_URL'>,
  ) {
    this.query = new SubscriptionsQuery(database.dataSource, readModel);
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Add subscriptions', description: 'Adds, matches or reinstates 1..1000 feeds.' })
  @ApiBody({ schema: openApiSchema(ADD_SUBSCRIPTIONS) })
  @ApiOkResponse({ type: AddResultBody })
  @ApiWriteErrors(true)
  @ApiValidationFailedResponse()
  async add(@CurrentUser() userId: string, @RequestId() requestId: string, @Body() body: unknown) {
    const items = parseAddItems(body);
    const outcome = await this.append.request(
      { type: 'SubscriptionsAddRequested', userId, items },
      requestId,
    );
    return presentAdded(outcome.success, outcome.failure);
  }

  @Get()
  @ApiOperation({ summary: 'List subscriptions changed since a time', description: 'Pages of at most 100.' })
  @ApiQueries(LIST_QUERY)
  @ApiOkResponse({ type: SubscriptionPageBody })
  @ApiValidationFailedResponse()
  async list(
    @CurrentUser() userId: string,
    @Query() rawQuery: Record<string, unknown>,
    @RequestOrigin() requestOrigin: string,
  ): Promise<SubscriptionPageBody> {
    const baseUrl = this.config.PUBLIC_URL ?? requestOrigin;
    const { since, sinceText, page, perPage, after } = parseListQuery(rawQuery);
    const result = await this.query.list(userId, since, { page, perPage, ...(after ? { after } : {}) });
    const link = (target: number, cursor?: PageCursor) => {
      const params = new URLSearchParams();
      if (sinceText !== undefined) params.set('since', sinceText);
      params.set('page', String(target));
      params.set('per_page', String(perPage));
      if (cursor) params.set('after', formatCursor(cursor));
      return `${baseUrl}/v1/subscriptions?${params.toString()}`;
    };
    const body: SubscriptionPageBody = {
      total: result.total,
      page,
      per_page: perPage,
      subscriptions: result.items.map(presentSubscription),
    };
    // `next` continues after this page's last item, so changes made meanwhile shift nothing past it.
    if (result.next) body.next = link(page + 1, result.next);
    if (page > 1) body.previous = link(Math.min(page - 1, Math.max(1, Math.ceil(result.total / perPage))));
    return body;
  }

  @Get(':guid')
  @ApiGuidParam()
  @ApiOperation({ summary: 'Get one subscription by any guid it has had' })
  @ApiOkResponse({ type: SubscriptionBody })
  @ApiValidationFailedResponse()
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiGoneResponse(GONE)
  async get(@CurrentUser() userId: string, @Param('guid') guidParam: string): Promise<SubscriptionBody> {
    const view = await this.query.get(userId, parseWith(GUID, guidParam));
    if (!view) throw new NotFound();
    if (view.deleted !== null) throw new Gone();
    return presentSubscription(view);
  }

  @Patch(':guid')
  @ApiGuidParam()
  @ApiOperation({ summary: 'Change feed_url, guid or is_subscribed' })
  @ApiBody({ schema: openApiSchema(UPDATE_SUBSCRIPTION) })
  @ApiOkResponse({ type: UpdateResultBody, description: 'Only the fields that changed' })
  @ApiWriteErrors(true)
  @ApiValidationFailedResponse()
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiGoneResponse(GONE)
  async update(
    @CurrentUser() userId: string,
    @RequestId() requestId: string,
    @Param('guid') guidParam: string,
    @Body() body: unknown,
  ): Promise<UpdateResultBody> {
    const guid = parseWith(GUID, guidParam);
    const fields = parseUpdate(body);
    const outcome = await this.append.request(
      { type: 'SubscriptionUpdateRequested', userId, guid, ...fields },
      requestId,
    );
    if (outcome.kind === 'NotFound') throw new NotFound();
    if (outcome.kind === 'Gone') throw new Gone();
    const answer = presentUpdated(outcome.changed);
    if (Object.keys(answer).length > 0) return answer;
    // Nothing changed (a new_guid the subscription already resolves from), and the schema's answer
    // holds at least one field: the guid as it stands.
    const view = await this.query.get(userId, guid);
    return view ? presentGuid(view) : answer;
  }

  @Delete(':guid')
  @ApiGuidParam()
  @HttpCode(202)
  @ApiOperation({
    summary: 'Request the deletion of a subscription',
    description: 'Finalized asynchronously.',
  })
  @ApiAcceptedResponse({ type: DeletionReceiptBody })
  @ApiWriteErrors(false)
  @ApiValidationFailedResponse()
  @ApiNotFoundResponse(NOT_FOUND)
  async remove(
    @CurrentUser() userId: string,
    @RequestId() requestId: string,
    @Param('guid') guidParam: string,
  ): Promise<DeletionReceiptBody> {
    const guid = parseWith(GUID, guidParam);
    const outcome = await this.append.request({ type: 'DeletionRequested', userId, guid }, requestId);
    if (outcome.kind === 'NotFound') throw new NotFound();
    return { deletion_id: outcome.deletionId, message: DELETION_RECEIVED };
  }
}
