import { DEVICE_TYPES } from '@castlog/domain';
import { CastlogRoute, FormBody } from '@castlog/http';
import { DeviceView, GpodderQuery } from '@castlog/read-model';
import { Body, Controller, Get, Param, Post, Query, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AppendService } from '../append/append.service';
import { parseDeviceId, parseDeviceUpdate } from '../gpodder/gpodder.request';
import { RequestId } from '../http/request-context';
import { shownTime } from './listing';
import { Pages, seeOther } from './pages';
import { FORM } from './sign-in.page';
import { WebErrorFilter } from './web-error.filter';
import { SignedIn, Visitor, type WebVisitor } from './web-session';

const PATH = '/web/devices';

/** A device as the page shows it: its last use as a `<time>`, or none when unknown. */
const shownDevice = (device: DeviceView) => ({
  ...device,
  lastUsed: device.lastUsed === null ? null : shownTime(device.lastUsed),
});

/** The gpodder.net devices: caption, type, subscriptions and last use; renamed or retyped through
 * the same request as `POST /api/2/devices/{user}/{device}.json`. */
@ApiExcludeController()
@UseFilters(WebErrorFilter)
@SignedIn()
@Controller(PATH)
export class DevicesPage {
  constructor(
    private readonly pages: Pages,
    private readonly gpodder: GpodderQuery,
    private readonly append: AppendService,
  ) {}

  @Get()
  async show(@Visitor() visitor: WebVisitor, @Res() reply: FastifyReply, @Query('done') done?: unknown) {
    const devices = await this.gpodder.devices(visitor.userId);
    return this.pages.send(
      reply,
      'devices',
      { title: 'Devices', section: PATH, visitor, ...(done === 'saved' ? { notice: 'Device saved.' } : {}) },
      { devices: devices.map(shownDevice), types: DEVICE_TYPES },
    );
  }

  @Post(':device')
  @CastlogRoute(FORM)
  async update(
    @Visitor() visitor: WebVisitor,
    @RequestId() requestId: string,
    @Res() reply: FastifyReply,
    @Param('device') deviceParam: string,
    @Body() form: FormBody,
  ) {
    const deviceId = parseDeviceId(deviceParam);
    const fields = parseDeviceUpdate(
      JSON.stringify({ caption: form.text('caption'), type: form.text('type') }),
    );
    await this.append.request(
      { type: 'DeviceUpdateRequested', userId: visitor.userId, deviceId, ...fields },
      requestId,
    );
    return seeOther(reply, `${PATH}?done=saved`);
  }
}
