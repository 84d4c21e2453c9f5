import { InvalidInputStatusByPath } from './route-options';

describe('InvalidInputStatusByPath', () => {
  const statuses = new InvalidInputStatusByPath();
  statuses.add({ url: '/v1/subscriptions', config: {} });
  statuses.add({ url: '/v1/subscriptions/:guid', config: {} });
  statuses.add({ url: '/api/2/devices/:user.json', config: { castlog: { invalidInputStatus: 400 } } });
  statuses.add({ url: '/subscriptions/:user/:device.txt', config: { castlog: { invalidInputStatus: 400 } } });
  statuses.add({ url: '/api/2/devices/special/:id', config: { castlog: { invalidInputStatus: 405 } } });
  statuses.add({ url: '/api/2/sync-devices/all.json', config: { castlog: { invalidInputStatus: 400 } } });

  it("answers the status of the routes a path starts like, up to the route's first parameter", () => {
    expect(statuses.statusFor('/api/2/devices/%zz.json')).toBe(400);
    expect(statuses.statusFor('/subscriptions/alice/%E0%A4%A.txt')).toBe(400);
  });

  it('answers 405 for a route without the option', () =>
    expect(statuses.statusFor('/v1/subscriptions/%zz')).toBe(405));

  it('prefers the longest beginning', () =>
    expect(statuses.statusFor('/api/2/devices/special/%zz')).toBe(405));

  it('answers nothing for a path under no route with parameters: an unknown route', () => {
    expect(statuses.statusFor('/elsewhere/%zz')).toBeUndefined();
    expect(statuses.statusFor('/api/2/%zz.json')).toBeUndefined();
    expect(statuses.statusFor('/v1/subscriptions%zz')).toBeUndefined();
    expect(statuses.statusFor('/api/2/sync-devices/%zz.json')).toBeUndefined();
    expect(statuses.statusFor(undefined)).toBeUndefined();
  });
});
