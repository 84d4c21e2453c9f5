import { DeviceId } from '@castlog/domain';
import { GpodderQuery } from '@castlog/read-model';
import { Inject, Injectable } from '@nestjs/common';
import { AppendService } from '../append/append.service';

/** A device is created by its first use: a route that names a device the user does not have yet
 * (a read too) appends the device's creation (`DeviceUpdateRequested` without fields: an `other`
 * without caption) and answers once it is applied. Two first uses at once both append; the
 * second changes nothing. */
@Injectable()
export class DeviceFirstUse {
  constructor(
    @Inject(GpodderQuery) private readonly query: GpodderQuery,
    @Inject(AppendService) private readonly append: AppendService,
  ) {}

  async ensure(userId: string, deviceId: DeviceId, requestId: string): Promise<void> {
    if (await this.query.hasDevice(userId, deviceId)) return;
    await this.append.request({ type: 'DeviceUpdateRequested', userId, deviceId }, requestId);
  }
}
