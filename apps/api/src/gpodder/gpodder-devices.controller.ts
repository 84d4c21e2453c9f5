import { GpodderQuery } from '@castlog/read-model';
import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppendService } from '../append/append.service';
import { ApiWriteErrors } from '../http/openapi';
import { openApiSchema } from '../http/schema';
import { RequestId } from '../http/request-context';
import { GpodderAuthenticated, GpodderIdentity, GpodderUser } from './auth/gpodder-auth';
import { ApiDeviceParam, ApiUserParam, GpodderRoute } from './gpodder.openapi';
import { DeviceBody, DEVICES_SCHEMA, presentDevice, SYNC_STATUS_SCHEMA } from './gpodder.presenter';
import {
  DEVICE_UPDATE,
  parseDeviceId,
  parseDeviceUpdate,
  parseSyncRequest,
  SYNC_REQUEST,
} from './gpodder.request';

export interface SyncStatusBody {
  readonly synchronized: string[][];
  readonly 'not-synchronized': string[];
}

/** gpodder.net's devices: the list, an update (or creation), and their synchronization. Every
 * device of a user shares the user's one subscription set, so all of them are synchronized with
 * each other. */
@ApiTags('gpodder')
@GpodderAuthenticated()
@Controller('api/2')
export class GpodderDevicesController {
  constructor(
    @Inject(GpodderQuery) private readonly query: GpodderQuery,
    @Inject(AppendService) private readonly append: AppendService,
  ) {}

  @Get('devices/:user.json')
  @GpodderRoute()
  @ApiUserParam()
  @ApiOperation({ summary: "The user's devices (gpodder.net)" })
  @ApiOkResponse({ schema: DEVICES_SCHEMA })
  async list(@GpodderUser() user: GpodderIdentity): Promise<DeviceBody[]> {
    return (await this.query.devices(user.id)).map(presentDevice);
  }

  @Post('devices/:user/:device.json')
  @HttpCode(200)
  @GpodderRoute()
  @ApiUserParam()
  @ApiDeviceParam()
  @ApiOperation({
    summary: 'Create or update a device (gpodder.net)',
    description:
      'Sets the caption and/or type given; a field not given keeps its value (a new device: caption "", type other). ' +
      'An empty body creates the device if need be. The body is read as JSON whatever its Content-Type.',
  })
  @ApiBody({ schema: openApiSchema(DEVICE_UPDATE), required: false })
  @ApiOkResponse({ description: 'Saved (an empty body, as gpodder.net answers)' })
  @ApiWriteErrors(true)
  async update(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() requestId: string,
    @Param('device') deviceParam: string,
    @Body() body: string,
  ): Promise<void> {
    const deviceId = parseDeviceId(deviceParam);
    const fields = parseDeviceUpdate(body ?? '');
    await this.append.request(
      { type: 'DeviceUpdateRequested', userId: user.id, deviceId, ...fields },
      requestId,
    );
  }

  @Get('sync-devices/:user.json')
  @GpodderRoute()
  @ApiUserParam()
  @ApiOperation({
    summary: 'Device synchronization (gpodder.net)',
    description: "All of a user's devices form one synchronized group; none is left out.",
  })
  @ApiOkResponse({ schema: SYNC_STATUS_SCHEMA })
  async syncStatus(@GpodderUser() user: GpodderIdentity): Promise<SyncStatusBody> {
    return this.status(user.id);
  }

  @Post('sync-devices/:user.json')
  @HttpCode(200)
  @GpodderRoute()
  @ApiUserParam()
  @ApiOperation({
    summary: 'Change device synchronization (gpodder.net)',
    description:
      'Accepted and checked for its shape, but it changes nothing: every device shares the one subscription set. ' +
      'Answers the synchronization as it is.',
  })
  @ApiBody({ schema: openApiSchema(SYNC_REQUEST), required: false })
  @ApiOkResponse({ schema: SYNC_STATUS_SCHEMA })
  @ApiWriteErrors(true)
  async changeSync(@GpodderUser() user: GpodderIdentity, @Body() body: string): Promise<SyncStatusBody> {
    parseSyncRequest(body ?? '');
    return this.status(user.id);
  }

  private async status(userId: string): Promise<SyncStatusBody> {
    const ids = (await this.query.devices(userId)).map((device) => device.id);
    return { synchronized: ids.length === 0 ? [] : [ids], 'not-synchronized': [] };
  }
}
