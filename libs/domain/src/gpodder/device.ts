import { DeviceId } from '../events/log-event';
import { Instant } from '../time';
import { Change } from '../subscriptions/change';
import { Device, UserSubscriptions } from '../subscriptions/subscription';

/** A device id of the gpodder.net face. */
export const DEVICE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** A device id the gpodder.net face accepts. */
export const isDeviceId = (value: unknown): value is DeviceId =>
  typeof value === 'string' && DEVICE_ID.test(value);

/** The device an event names, used `now`: saved with that last use, its fields kept. A device the
 * user has not used yet is created by its first use, as an `other` without caption. */
export const deviceUsed = (state: UserSubscriptions, deviceId: DeviceId, now: Instant): Change => {
  const existing = state.devices.get(deviceId);
  return savedDevice({
    userId: state.userId,
    id: deviceId,
    caption: existing?.caption ?? '',
    type: existing?.type ?? 'other',
    lastUsed: now,
  });
};

export const savedDevice = (device: Device): Change => ({ kind: 'DeviceSaved', device });

/** gpodder.net timestamps are whole Unix seconds. */
export const toUnixSeconds = (instant: Instant): number => Math.floor(instant / 1000);

/** An episode action's timestamp as gpodder.net writes it: `YYYY-MM-DDTHH:MM:SS`, UTC. */
export const toGpodderTime = (instant: Instant): string => new Date(instant).toISOString().slice(0, 19);
