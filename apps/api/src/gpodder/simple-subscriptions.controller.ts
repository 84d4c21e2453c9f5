import { FeedCatalog } from '@castlog/feeds';
import { GpodderQuery } from '@castlog/read-model';
import { toOpml, toPodcastsXml } from '@castlog/opml';
import {
  applyDecorators,
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  Param,
  Put,
  Query,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExcludeEndpoint,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { AppendService } from '../append/append.service';
import { ApiWriteErrors } from '../http/openapi';
import { RequestId } from '../http/request-context';
import { GpodderAuthenticated, GpodderIdentity, GpodderUser } from './auth/gpodder-auth';
import { DeviceFirstUse } from './device-first-use';
import { ApiDeviceParam, ApiUserParam, GpodderRoute, GpodderUploadRoute } from './gpodder.openapi';
import { SIMPLE_LIST_SCHEMA, toJsonp, toUrlLines } from './gpodder.presenter';
import {
  invalidFormat,
  JSONP_CALLBACK,
  parseDeviceId,
  parseJsonpCallback,
  parseSimpleList,
  SIMPLE_FORMATS,
  SimpleFormat,
  USER_LIST_FORMATS,
  UserListFormat,
} from './gpodder.request';

const CONTENT_TYPE: Record<UserListFormat, string> = {
  json: 'application/json; charset=utf-8',
  jsonp: 'application/javascript; charset=utf-8',
  opml: 'text/x-opml; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
};
const MEDIA_TYPE: Record<UserListFormat, string> = {
  json: 'application/json',
  jsonp: 'application/javascript',
  opml: 'text/x-opml',
  txt: 'text/plain',
  xml: 'application/xml',
};
const LIST_DESCRIPTION: Record<UserListFormat, string> = {
  json: 'A JSON list of feed URLs',
  jsonp: 'The JSON list of feed URLs passed to the `jsonp` callback: `callback([...])`',
  opml: 'An OPML 2.0 document with one rss outline per feed',
  txt: 'One feed URL per line',
  xml: "gpodder.net's podcast list: `<podcasts>` with a `<podcast>` per feed, its `<title>` and `<url>`",
};
/** What a PUT's body is in each format: a `jsonp` PUT's is JSON (the callback wraps answers only). */
const BODY_DESCRIPTION: Record<SimpleFormat, string> = {
  ...LIST_DESCRIPTION,
  jsonp: 'A JSON list of feed URLs (a callback wraps answers only)',
};
const DEVICE_LIST = "a device's list";
const USER_LIST = "the user's list";

/** The OpenAPI description of a GET in `format`. */
const ApiList = (format: UserListFormat, device: boolean) =>
  applyDecorators(
    ApiOperation({
      summary: `The subscribed feeds as ${format} (gpodder.net simple API)`,
      description: device
        ? "Every device shares the user's one subscription set; a device not used before is created."
        : format === 'xml'
          ? "The user's subscribed feeds, each titled as its feed names itself once castlog has fetched it, else by its URL."
          : "The user's subscribed feeds.",
    }),
    // The media type is the 200's own (`content`), not the route's: its errors are JSON error bodies.
    format === 'json'
      ? ApiOkResponse({ description: LIST_DESCRIPTION.json, schema: SIMPLE_LIST_SCHEMA })
      : ApiOkResponse({
          description: LIST_DESCRIPTION[format],
          content: { [MEDIA_TYPE[format]]: { schema: { type: 'string' } } },
        }),
    Header('Content-Type', CONTENT_TYPE[format]),
    // A script: no browser may read it as anything else.
    ...(format === 'jsonp'
      ? [
          Header('X-Content-Type-Options', 'nosniff'),
          ApiQuery({
            name: 'jsonp',
            required: true,
            description:
              'The callback the JSON list is passed to: a JavaScript identifier or a dotted path of them',
            schema: { type: 'string', pattern: JSONP_CALLBACK.source, example: 'showSubscriptions' },
          }),
        ]
      : []),
    ...(device ? [ApiDeviceParam(), ApiWriteErrors(false)] : []),
  );

/** The OpenAPI description of a PUT in `format`. */
const ApiReplace = (format: SimpleFormat) =>
  applyDecorators(
    HttpCode(200),
    ApiOperation({
      summary: `Replace the subscribed feeds with a ${format} list (gpodder.net simple API)`,
      description:
        'Subscribes to every feed in the list (matched, reinstated or created as POST /v1/subscriptions items, ' +
        'each URL trimmed of the white space around it first; URLs the rules refuse are skipped) and ' +
        'unsubscribes from every other, in one change. The body is read ' +
        `as ${format === 'jsonp' ? 'JSON' : format} whatever its Content-Type. Answers an empty 200 once applied, as gpodder.net does.`,
    }),
    ApiConsumes(format === 'jsonp' ? MEDIA_TYPE.json : MEDIA_TYPE[format]),
    ApiBody({
      description: BODY_DESCRIPTION[format],
      schema: format === 'json' || format === 'jsonp' ? SIMPLE_LIST_SCHEMA : { type: 'string' },
    }),
    ApiOkResponse({ description: 'Replaced (an empty body)' }),
    ApiDeviceParam(),
    ApiWriteErrors(true),
  );

/** gpodder.net's simple API: the subscription list as JSON, JSONP, OPML or text (and the user's as
 * gpodder.net's podcast XML too), read and replaced whole. The device in the path is recorded
 * (created by its first use) but the list is the user's. Any other extension is 400 "Invalid
 * format", after the credentials, as in mygpo. */
@ApiTags('gpodder')
@GpodderAuthenticated()
@ApiUserParam()
@Controller('subscriptions')
export class SimpleSubscriptionsController {
  constructor(
    @Inject(GpodderQuery) private readonly query: GpodderQuery,
    @Inject(AppendService) private readonly append: AppendService,
    @Inject(DeviceFirstUse) private readonly devices: DeviceFirstUse,
    @Inject(FeedCatalog) private readonly catalog: FeedCatalog,
  ) {}

  @Get(':user/:device.json')
  @GpodderRoute()
  @ApiList('json', true)
  deviceJson(@GpodderUser() user: GpodderIdentity, @RequestId() id: string, @Param('device') device: string) {
    return this.deviceList(user, id, device, 'json');
  }

  @Get(':user/:device.jsonp')
  @GpodderRoute()
  @ApiList('jsonp', true)
  deviceJsonp(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Param('device') device: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.deviceList(user, id, device, 'jsonp', query);
  }

  @Get(':user/:device.opml')
  @GpodderRoute()
  @ApiList('opml', true)
  deviceOpml(@GpodderUser() user: GpodderIdentity, @RequestId() id: string, @Param('device') device: string) {
    return this.deviceList(user, id, device, 'opml');
  }

  @Get(':user/:device.txt')
  @GpodderRoute()
  @ApiList('txt', true)
  deviceTxt(@GpodderUser() user: GpodderIdentity, @RequestId() id: string, @Param('device') device: string) {
    return this.deviceList(user, id, device, 'txt');
  }

  /** Any other extension of a device's list (`xml` among them, as in mygpo): 400. */
  @Get(':user/:device.:format')
  @GpodderRoute()
  @ApiExcludeEndpoint()
  deviceOther(@Param('format') format: string): never {
    throw invalidFormat(format, SIMPLE_FORMATS, DEVICE_LIST);
  }

  @Get(':user.json')
  @GpodderRoute()
  @ApiList('json', false)
  userJson(@GpodderUser() user: GpodderIdentity) {
    return this.list(user, 'json');
  }

  @Get(':user.jsonp')
  @GpodderRoute()
  @ApiList('jsonp', false)
  userJsonp(@GpodderUser() user: GpodderIdentity, @Query() query: Record<string, unknown>) {
    return this.jsonp(user, parseJsonpCallback(query));
  }

  @Get(':user.opml')
  @GpodderRoute()
  @ApiList('opml', false)
  userOpml(@GpodderUser() user: GpodderIdentity) {
    return this.list(user, 'opml');
  }

  @Get(':user.txt')
  @GpodderRoute()
  @ApiList('txt', false)
  userTxt(@GpodderUser() user: GpodderIdentity) {
    return this.list(user, 'txt');
  }

  @Get(':user.xml')
  @GpodderRoute()
  @ApiList('xml', false)
  userXml(@GpodderUser() user: GpodderIdentity) {
    return this.list(user, 'xml');
  }

  /** Any other extension of the user's list: 400. */
  @Get(':user.:format')
  @GpodderRoute()
  @ApiExcludeEndpoint()
  userOther(@Param('format') format: string): never {
    throw invalidFormat(format, USER_LIST_FORMATS, USER_LIST);
  }

  @Put(':user/:device.json')
  @GpodderUploadRoute()
  @ApiReplace('json')
  replaceJson(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Param('device') device: string,
    @Body() body: string,
  ): Promise<void> {
    return this.replace(user, id, device, 'json', body);
  }

  @Put(':user/:device.jsonp')
  @GpodderUploadRoute()
  @ApiReplace('jsonp')
  replaceJsonp(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Param('device') device: string,
    @Body() body: string,
  ): Promise<void> {
    return this.replace(user, id, device, 'jsonp', body);
  }

  @Put(':user/:device.opml')
  @GpodderUploadRoute()
  @ApiReplace('opml')
  replaceOpml(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Param('device') device: string,
    @Body() body: string,
  ): Promise<void> {
    return this.replace(user, id, device, 'opml', body);
  }

  @Put(':user/:device.txt')
  @GpodderUploadRoute()
  @ApiReplace('txt')
  replaceTxt(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Param('device') device: string,
    @Body() body: string,
  ): Promise<void> {
    return this.replace(user, id, device, 'txt', body);
  }

  /** A PUT of any other extension (`xml` among them): 400, its body unread. */
  @Put(':user/:device.:format')
  @GpodderUploadRoute()
  @ApiExcludeEndpoint()
  replaceOther(@Param('format') format: string): never {
    throw invalidFormat(format, SIMPLE_FORMATS, DEVICE_LIST);
  }

  private async deviceList(
    user: GpodderIdentity,
    requestId: string,
    deviceParam: string,
    format: SimpleFormat,
    query: Record<string, unknown> = {},
  ): Promise<string | string[]> {
    const deviceId = parseDeviceId(deviceParam);
    if (format === 'jsonp') {
      const callback = parseJsonpCallback(query);
      await this.devices.ensure(user.id, deviceId, requestId);
      return this.jsonp(user, callback);
    }
    await this.devices.ensure(user.id, deviceId, requestId);
    return this.list(user, format);
  }

  /** The list in `format`: JSON is serialised by the framework, the others are sent as written;
   * OPML and XML name each feed by its title when the catalog knows it. */
  private async list(
    user: GpodderIdentity,
    format: Exclude<UserListFormat, 'jsonp'>,
  ): Promise<string | string[]> {
    const urls = await this.query.subscribedUrls(user.id);
    switch (format) {
      case 'json':
        return urls;
      case 'opml':
        return toOpml(await this.catalog.withTitles(user.id, urls), {
          title: `${user.name}'s subscriptions`,
          dateCreated: new Date(),
        });
      case 'txt':
        return toUrlLines(urls);
      case 'xml':
        return toPodcastsXml(await this.catalog.withTitles(user.id, urls));
    }
  }

  /** The JSON list passed to `callback`, checked already (`parseJsonpCallback`). */
  private async jsonp(user: GpodderIdentity, callback: string): Promise<string> {
    return toJsonp(callback, await this.query.subscribedUrls(user.id));
  }

  /** A replacing upload of the list: one event, answered once applied. */
  private async replace(
    user: GpodderIdentity,
    requestId: string,
    deviceParam: string,
    format: SimpleFormat,
    body: string | undefined,
  ): Promise<void> {
    const deviceId = parseDeviceId(deviceParam);
    const add = parseSimpleList(format, body ?? '');
    await this.append.request(
      { type: 'GpodderUploadRequested', userId: user.id, deviceId, add, remove: [], replace: true },
      requestId,
    );
  }
}
