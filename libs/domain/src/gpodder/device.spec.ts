// The gpodder.net face's small helpers: device ids, and its timestamps.
import { DEVICE_TYPES } from '../events/log-event';
import { isDeviceId, toGpodderTime, toUnixSeconds } from './device';

describe('isDeviceId', () => {
  it('accepts 1 to 64 letters, digits, dots, underscores and hyphens', () => {
    for (const id of ['a', 'phone', 'Nexus_5X.2-b', '0', 'x'.repeat(64)])
      expect([id, isDeviceId(id)]).toEqual([id, true]);
  });

  it('refuses anything else, and what is not a string', () => {
    for (const id of [
      '',
      'x'.repeat(65),
      'my phone',
      'phone/1',
      'téléphone',
      'a:b',
      'a\n',
      42,
      null,
      undefined,
    ])
      expect([id, isDeviceId(id)]).toEqual([id, false]);
  });
});

describe('device types', () => {
  it('are the five gpodder.net knows', () =>
    expect([...DEVICE_TYPES].sort()).toEqual(['desktop', 'laptop', 'mobile', 'other', 'server']));
});

describe('gpodder.net time', () => {
  const instant = Date.UTC(2024, 0, 2, 3, 4, 5, 678);

  it('toUnixSeconds drops the milliseconds: a clock inside a second answers that second', () => {
    expect(toUnixSeconds(instant)).toBe(Date.UTC(2024, 0, 2, 3, 4, 5) / 1000);
    expect(toUnixSeconds(Date.UTC(2024, 0, 2, 3, 4, 5))).toBe(toUnixSeconds(instant));
    expect(toUnixSeconds(0)).toBe(0);
  });

  it('so `since = toUnixSeconds(clock)` read as `since * 1000 <=` reaches the clock itself', () =>
    expect(toUnixSeconds(instant) * 1000).toBeLessThanOrEqual(instant));

  it('toGpodderTime writes YYYY-MM-DDTHH:MM:SS in UTC, without milliseconds or zone', () => {
    expect(toGpodderTime(instant)).toBe('2024-01-02T03:04:05');
    expect(toGpodderTime(0)).toBe('1970-01-01T00:00:00');
  });
});
