import { FeedCatalog } from '@castlog/feeds';
import { GpodderQuery } from '@castlog/read-model';
import { toOpml } from '@castlog/opml';
import { applyDecorators, Body, Controller, Get, Header, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppendService } from '../append/append.service';
import { ApiWriteErrors } from '../http/openapi';
import { RequestId } from '../http/request-context';
import { GpodderAuthenticated, GpodderIdentity, GpodderUser } from './auth/gpodder-auth';
import { DeviceFirstUse } from './device-first-use';
import { ApiDeviceParam, ApiUserParam, GpodderRoute, GpodderUploadRoute } from './gpodder.openapi';
import { SIMPLE_LIST_SCHEMA, toUrlLines } from './gpodder.presenter';
import { parseDeviceId, parseSimpleList, SimpleFormat } from './gpodder.request';

const CONTENT_TYPE: Record<SimpleFormat, string> = {
  json: 'application/json; charset=utf-8',
  opml: 'text/x-opml; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
};
const MEDIA_TYPE: Record<SimpleFormat, string> = {
  json: 'application/json',
  opml: 'text/x-opml',
  txt: 'text/plain',
};
const LIST_DESCRIPTION: Record<SimpleFormat, string> = {
  json: 'A JSON list of feed URLs',
  opml: 'An OPML 2.0 document with one rss outline per feed',
  txt: 'One feed URL per line',
};

/** The OpenAPI description of a GET in `format`. */
const ApiList = (format: SimpleFormat, device: boolean) =>
  applyDecorators(
    ApiOperation({
      summary: `The subscribed feeds as ${format} (gpodder.net simple API)`,
      description: device
        ? "Every device shares the user's one subscription set; a device not used before is created."
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
    ...(device ? [ApiDeviceParam(), ApiWriteErrors(false)] : []),
  );

/** The OpenAPI description of a PUT in `format`. */
const ApiReplace = (format: SimpleFormat) =>
  applyDecorators(
    HttpCode(200),
    ApiOperation({
      summary: `Replace the subscribed feeds with a ${format} list (gpodder.net simple API)`,
      description:
        'Subscribes to every feed in the list (matched, reinstated or created as POST /v1/subscriptions items; ' +
        'URLs the rules refuse are skipped) and unsubscribes from every other, in one change. The body is read ' +
        `as ${format} whatever its Content-Type. Answers an empty 200 once applied, as gpodder.net does.`,
    }),
    ApiConsumes(MEDIA_TYPE[format]),
    ApiBody({
      description: LIST_DESCRIPTION[format],
      schema: format === 'json' ? SIMPLE_LIST_SCHEMA : { type: 'string' },
    }),
    ApiOkResponse({ description: 'Replaced (an empty body)' }),
    ApiDeviceParam(),
    ApiWriteErrors(true),
  );

/** gpodder.net's simple API: the subscription list as JSON, OPML or text, read and replaced whole.
 * The device in the path is recorded (created by its first use) but the list is the user's. */
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

  @Get(':user.json')
  @GpodderRoute()
  @ApiList('json', false)
  userJson(@GpodderUser() user: GpodderIdentity) {
    return this.list(user, 'json');
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

  private async deviceList(
    user: GpodderIdentity,
    requestId: string,
    deviceParam: string,
    format: SimpleFormat,
  ): Promise<string | string[]> {
    const deviceId = parseDeviceId(deviceParam);
    await this.devices.ensure(user.id, deviceId, requestId);
    return this.list(user, format);
  }

  /** The list in `format`: JSON is serialised by the framework, OPML (each feed named by its title
   * when the catalog knows it) and text are sent as written. */
  private async list(user: GpodderIdentity, format: SimpleFormat): Promise<string | string[]> {
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
    }
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
