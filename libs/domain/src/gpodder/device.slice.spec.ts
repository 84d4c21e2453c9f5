// decideDeviceUpdate: POST /api/2/devices/{user}/{device}.json (DeviceUpdateRequested), given any
// earlier events. The API checks the device id and the type before the request reaches the log
// (isDeviceId, DEVICE_TYPES in the codec): the decider is only given valid ones.
import {
  at,
  deciderSpec,
  device,
  DEVICE_UPDATED,
  deviceUpdated,
  OTHER_USER,
  T1,
  T2,
  T3,
  USER,
} from '../testing';

const spec = deciderSpec();

describe('a device the user has not used yet', () => {
  it('is created as an `other` without caption when the request names no field', () =>
    spec
      .when(at(T1, deviceUpdated('phone')))
      .thenOutcome(DEVICE_UPDATED)
      .thenChanges(
        { kind: 'DeviceSaved', device: device('phone', T1) },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T1 },
      )
      .thenState((s) => s.lastInstant === T1));

  it('is created with the fields given', () =>
    spec
      .when(at(T1, deviceUpdated('laptop-1', { caption: 'Work laptop', type: 'laptop' })))
      .thenOutcome(DEVICE_UPDATED)
      .thenState((s) => {
        expect(s.devices).toEqual(new Map([['laptop-1', device('laptop-1', T1, 'Work laptop', 'laptop')]]));
      }));

  it('gets the default for the field not given: type `other`, caption ""', () =>
    spec
      .given(at(T1, deviceUpdated('a', { caption: 'Only a caption' })))
      .when(at(T2, deviceUpdated('b', { type: 'mobile' })))
      .thenState((s) => {
        expect(s.devices.get('a')).toEqual(device('a', T1, 'Only a caption', 'other'));
        expect(s.devices.get('b')).toEqual(device('b', T2, '', 'mobile'));
      }));

  it('leaves the subscriptions and every other device alone', () =>
    spec
      .given(at(T1, deviceUpdated('phone', { caption: 'Phone', type: 'mobile' })))
      .when(at(T2, deviceUpdated('tv')))
      .thenChanges(
        { kind: 'DeviceSaved', device: device('tv', T2) },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 },
      )
      .thenState((s) => {
        expect(s.devices.get('phone')).toEqual(device('phone', T1, 'Phone', 'mobile'));
        expect(s.subscriptions.size).toBe(0);
      }));
});

describe('an existing device', () => {
  const existing = at(T1, deviceUpdated('phone', { caption: 'Phone', type: 'mobile' }));

  it('an update of the caption only keeps the type', () =>
    spec
      .given(existing)
      .when(at(T2, deviceUpdated('phone', { caption: 'Old phone' })))
      .thenOutcome(DEVICE_UPDATED)
      .thenChanges(
        { kind: 'DeviceSaved', device: device('phone', T2, 'Old phone', 'mobile') },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 },
      ));

  it('an update of the type only keeps the caption', () =>
    spec
      .given(existing)
      .when(at(T2, deviceUpdated('phone', { type: 'server' })))
      .thenChanges(
        { kind: 'DeviceSaved', device: device('phone', T2, 'Phone', 'server') },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 },
      ));

  it('an empty caption is a caption: it replaces the one stored', () =>
    spec
      .given(existing)
      .when(at(T2, deviceUpdated('phone', { caption: '' })))
      .thenState((s) => {
        expect(s.devices.get('phone')).toEqual(device('phone', T2, '', 'mobile'));
      }));

  it('an update that names both replaces both', () =>
    spec
      .given(existing)
      .when(at(T2, deviceUpdated('phone', { caption: 'Desk', type: 'desktop' })))
      .thenState((s) => {
        expect(s.devices.get('phone')).toEqual(device('phone', T2, 'Desk', 'desktop'));
      }));

  it('an update that changes no field is a use: only the last use moves, and the clock with it', () =>
    spec
      .given(existing)
      .when(at(T2, deviceUpdated('phone', { caption: 'Phone', type: 'mobile' })))
      .thenOutcome(DEVICE_UPDATED)
      .thenChanges(
        { kind: 'DeviceSaved', device: device('phone', T2, 'Phone', 'mobile') },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 },
      )
      .thenState((s) => s.lastInstant === T2));

  it('a request naming no field (a first use of a device that exists) keeps the fields, used now', () =>
    spec
      .given(existing)
      .when(at(T2, deviceUpdated('phone')))
      .thenOutcome(DEVICE_UPDATED)
      .thenState((s) => {
        expect(s.devices.get('phone')).toEqual(device('phone', T2, 'Phone', 'mobile'));
      }));

  it('a device created with the defaults, updated to the defaults, is used then', () =>
    spec
      .given(at(T1, deviceUpdated('tv')))
      .when(at(T3, deviceUpdated('tv', { caption: '', type: 'other' })))
      .thenChanges(
        { kind: 'DeviceSaved', device: device('tv', T3) },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T3 },
      ));
});

describe("a device's last use", () => {
  it('is the instant decided, raised past the last instant when the record time is earlier', () =>
    spec
      .given(at(T2, deviceUpdated('phone')))
      .when(at(T1, deviceUpdated('phone', { caption: 'Phone' })))
      .thenState((s) => {
        expect(s.devices.get('phone')).toEqual(device('phone', T2 + 1, 'Phone'));
      }));

  it("moves only the device named: the user's other devices keep theirs", () =>
    spec
      .given(at(T1, deviceUpdated('phone')), at(T2, deviceUpdated('tv')))
      .when(at(T3, deviceUpdated('phone')))
      .thenState((s) => {
        expect(s.devices.get('phone')?.lastUsed).toBe(T3);
        expect(s.devices.get('tv')?.lastUsed).toBe(T2);
      }));
});

describe('device ids', () => {
  it('are case-sensitive: Phone and phone are two devices', () =>
    spec
      .given(at(T1, deviceUpdated('phone', { type: 'mobile' })))
      .when(at(T2, deviceUpdated('Phone')))
      .thenState((s) => {
        expect([...s.devices.keys()].sort()).toEqual(['Phone', 'phone']);
        expect(s.devices.get('phone')?.type).toBe('mobile');
      }));

  it("are the user's own: the device saved carries the user's id", () =>
    deciderSpec(undefined, OTHER_USER)
      .when(at(T1, deviceUpdated('phone', { caption: 'Bob' }, OTHER_USER)))
      .thenChanges(
        { kind: 'DeviceSaved', device: device('phone', T1, 'Bob', 'other', OTHER_USER) },
        { kind: 'ClockAdvanced', userId: OTHER_USER, lastInstant: T1 },
      ));
});
