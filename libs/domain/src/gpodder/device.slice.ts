import { DeviceUpdateRequested } from '../events/log-event';
import { Instant } from '../time';
import { DecisionOf, finish } from '../subscriptions/decision';
import { UserSubscriptions } from '../subscriptions/subscription';
import { savedDevice } from './device';

// POST /api/2/devices/{user}/{device}.json, and a device's first use on a read route:
// DeviceUpdateRequested.

/** Sets the fields given, keeping the others (an `other` without caption when new). The request is a
 * use of the device even when it changes no field: the device's last use is now. */
export const decideDeviceUpdate = (
  state: UserSubscriptions,
  event: DeviceUpdateRequested,
  now: Instant,
): DecisionOf<DeviceUpdateRequested> => {
  const existing = state.devices.get(event.deviceId);
  const device = {
    userId: state.userId,
    id: event.deviceId,
    caption: event.caption ?? existing?.caption ?? '',
    type: event.deviceType ?? existing?.type ?? 'other',
    lastUsed: now,
  };
  return { outcome: { kind: 'DeviceUpdated' }, changes: finish(state, [savedDevice(device)], now) };
};
