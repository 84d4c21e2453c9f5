import { toUnixSeconds } from '@castlog/domain';
import { GpodderQuery } from '@castlog/read-model';
import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppendService } from '../append/append.service';
import { ApiWriteErrors } from '../http/openapi';
import { ApiQueries, openApiSchema } from '../http/schema';
import { RequestId } from '../http/request-context';
import { GpodderAuthenticated, GpodderIdentity, GpodderUser } from './auth/gpodder-auth';
import { DeviceFirstUse } from './device-first-use';
import { ApiDeviceParam, ApiUserParam, GpodderRoute, GpodderUploadRoute } from './gpodder.openapi';
import {
  presentUpload,
  SUBSCRIPTION_CHANGES_SCHEMA,
  UPLOAD_RESULT_SCHEMA,
  UploadResultBody,
} from './gpodder.presenter';
import {
  parseDeviceId,
  parseSince,
  parseUpload,
  SUBSCRIPTION_CHANGES_QUERY,
  UPLOAD,
} from './gpodder.request';

export interface SubscriptionChangesBody {
  readonly add: readonly string[];
  readonly remove: readonly string[];
  readonly timestamp: number;
}

/** gpodder.net's subscription sync: uploads of changes and downloads of the changes since a
 * timestamp. The user has one subscription set; the device in the path is recorded (created by
 * its first use) but does not narrow anything. */
@ApiTags('gpodder')
@GpodderAuthenticated()
@Controller('api/2/subscriptions/:user')
export class GpodderSubscriptionsController {
  constructor(
    @Inject(GpodderQuery) private readonly query: GpodderQuery,
    @Inject(AppendService) private readonly append: AppendService,
    @Inject(DeviceFirstUse) private readonly devices: DeviceFirstUse,
  ) {}

  @Post(':device.json')
  @HttpCode(200)
  @GpodderUploadRoute()
  @ApiUserParam()
  @ApiDeviceParam()
  @ApiOperation({
    summary: 'Upload subscription changes (gpodder.net)',
    description:
      'Each URL loses the white space around it first, as gpodder.net trims it, and is reported `[sent, trimmed]` ' +
      'when it had some. Each added URL is matched, reinstated or created as a POST /v1/subscriptions item; each ' +
      'removed URL that matches a subscription unsubscribes it. A URL in both lists is 400. One upload applies ' +
      'whole, and the answer comes once it has. The body is read as JSON whatever its Content-Type.',
  })
  @ApiBody({ schema: openApiSchema(UPLOAD) })
  @ApiOkResponse({ schema: UPLOAD_RESULT_SCHEMA })
  @ApiWriteErrors(true)
  async upload(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() requestId: string,
    @Param('device') deviceParam: string,
    @Body() body: string,
  ): Promise<UploadResultBody> {
    const deviceId = parseDeviceId(deviceParam);
    const { add, remove, sent } = parseUpload(body ?? '');
    const outcome = await this.append.request(
      { type: 'GpodderUploadRequested', userId: user.id, deviceId, add, remove },
      requestId,
    );
    return presentUpload(outcome, sent);
  }

  @Get(':device.json')
  @GpodderRoute()
  @ApiUserParam()
  @ApiDeviceParam()
  @ApiQueries(SUBSCRIPTION_CHANGES_QUERY)
  @ApiOperation({ summary: 'Download subscription changes (gpodder.net)' })
  @ApiOkResponse({ schema: SUBSCRIPTION_CHANGES_SCHEMA })
  @ApiWriteErrors(false)
  async changes(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() requestId: string,
    @Param('device') deviceParam: string,
    @Query() query: Record<string, unknown>,
  ): Promise<SubscriptionChangesBody> {
    const deviceId = parseDeviceId(deviceParam);
    const since = parseSince(query);
    await this.devices.ensure(user.id, deviceId, requestId);
    const changes = await this.query.changesSince(user.id, since === null ? null : since * 1000);
    return { add: changes.add, remove: changes.remove, timestamp: toUnixSeconds(changes.clock) };
  }
}
