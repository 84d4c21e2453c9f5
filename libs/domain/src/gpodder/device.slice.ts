import { DeviceUpdateRequested } from '../events/log-event';
import { Instant } from '../time';
import { DecisionOf, finish } from '../subscriptions/decision';
import { UserSubscriptions } from '../subscriptions/subscription';
import { savedDevice } from './device';

// POST /api/2/devices/{user}/{device}.json, and a device's first use on a read route:
// DeviceUpdateRequested.

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
  };
  const unchanged =
    existing !== undefined && existing.caption === device.caption && existing.type === device.type;
  return {
    outcome: { kind: 'DeviceUpdated' },
    changes: unchanged ? [] : finish(state, [savedDevice(device)], now),
  };
};
