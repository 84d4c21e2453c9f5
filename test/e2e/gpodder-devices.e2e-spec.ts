import { ApiResponse } from '../support/api-client';
import { GPODDER_INVALID as INVALID, errorBody, feed } from '../support/contract';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

const basic = (user: TestUser) => `Basic ${Buffer.from(`${user.name}:${user.password}`).toString('base64')}`;

describe('gpodder.net devices: /api/2/devices and /api/2/sync-devices', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres' })));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  const devicesOf = (user: TestUser) => app.as(user).get(`/api/2/devices/${user.name}.json`);
  const updateDevice = (
    user: TestUser,
    device: string,
    rawBody: string,
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ) => app.as(user).request('POST', `/api/2/devices/${user.name}/${device}.json`, { rawBody, headers });
  const expect400 = (response: ApiResponse, detail?: string | RegExp) => {
    expect(response.status).toBe(400);
    expect(response.body).toEqual(INVALID(detail));
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  };

  describe('GET /api/2/devices/{user}.json', () => {
    it('answers [] for a user without devices', async () => {
      const response = await devicesOf(alice);
      expect(response.status).toBe(200);
      expect(response.body).toEqual([]);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('lists id, caption, type and the number of feeds subscribed (one set shared by every device)', async () => {
      expect((await updateDevice(alice, 'phone', '{"caption":"My phone","type":"mobile"}')).status).toBe(200);
      const upload = await app
        .as(alice)
        .post(`/api/2/subscriptions/${alice.name}/laptop.json`, { add: [feed('a'), feed('b')], remove: [] });
      expect(upload.status).toBe(200);
      const response = await devicesOf(alice);
      expect(response.body).toEqual([
        { id: 'laptop', caption: '', type: 'other', subscriptions: 2 },
        { id: 'phone', caption: 'My phone', type: 'mobile', subscriptions: 2 },
      ]);
    });

    it("answers 401 with the Basic challenge for another user's path, whatever the credentials", async () => {
      const bob = await app.freshUser();
      for (const authorization of [`Bearer ${bob.token}`, basic(bob)]) {
        const response = await app.anonymous
          .withAuthorization(authorization)
          .get(`/api/2/devices/${alice.name}.json`);
        expect(response.status).toBe(401);
        expect(response.body).toEqual(errorBody(401, 'User not authorized'));
        expect(response.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
      }
      expect((await app.anonymous.get(`/api/2/devices/${alice.name}.json`)).status).toBe(401);
    });

    it('accepts Basic credentials, as gpodder.net clients send them', async () => {
      const response = await app.anonymous
        .withAuthorization(basic(alice))
        .get(`/api/2/devices/${alice.name}.json`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual([]);
    });
  });

  describe('POST /api/2/devices/{user}/{device}.json', () => {
    it('creates a device with the fields given and answers an empty 200, as gpodder.net does', async () => {
      const response = await updateDevice(alice, 'Nexus_5X.2-b', '{"caption":"Pixel","type":"mobile"}');
      expect(response.status).toBe(200);
      expect(response.text).toBe('');
      expect((await devicesOf(alice)).body).toEqual([
        { id: 'Nexus_5X.2-b', caption: 'Pixel', type: 'mobile', subscriptions: 0 },
      ]);
    });

    it('reads the write at once: the next GET sees it (read your writes)', async () => {
      for (let i = 0; i < 3; i += 1) {
        expect((await updateDevice(alice, 'phone', JSON.stringify({ caption: `c${i}` }))).status).toBe(200);
        expect((await devicesOf(alice)).body).toEqual([
          { id: 'phone', caption: `c${i}`, type: 'other', subscriptions: 0 },
        ]);
      }
    });

    it('keeps the field not given: caption only keeps the type, type only keeps the caption', async () => {
      await updateDevice(alice, 'phone', '{"caption":"Phone","type":"mobile"}');
      await updateDevice(alice, 'phone', '{"caption":"Old phone"}');
      expect((await devicesOf(alice)).body).toEqual([
        { id: 'phone', caption: 'Old phone', type: 'mobile', subscriptions: 0 },
      ]);
      await updateDevice(alice, 'phone', '{"type":"server"}');
      expect((await devicesOf(alice)).body).toEqual([
        { id: 'phone', caption: 'Old phone', type: 'server', subscriptions: 0 },
      ]);
    });

    it('creates an `other` device without caption from an empty body (AntennaPod sends one as JSON)', async () => {
      expect((await updateDevice(alice, 'antennapod', '')).status).toBe(200);
      expect((await devicesOf(alice)).body).toEqual([
        { id: 'antennapod', caption: '', type: 'other', subscriptions: 0 },
      ]);
    });

    it('reads the body as JSON whatever the Content-Type says, or without one', async () => {
      const labels = [
        'application/x-www-form-urlencoded',
        'text/plain',
        'plain/text; charset=utf-8',
        'application/octet-stream',
        'not a media type',
      ];
      for (const [i, label] of labels.entries()) {
        const response = await updateDevice(alice, `d${i}`, '{"caption":"x","type":"laptop"}', {
          'content-type': label,
        });
        expect([label, response.status]).toEqual([label, 200]);
      }
      const unlabelled = await fetch(new URL(`/api/2/devices/${alice.name}/bare.json`, app.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${alice.token}` },
        body: '{"caption":"no label","type":"desktop"}',
      });
      expect(unlabelled.status).toBe(200);
      expect((await devicesOf(alice)).body).toEqual(
        expect.arrayContaining([
          { id: 'd0', caption: 'x', type: 'laptop', subscriptions: 0 },
          { id: 'd4', caption: 'x', type: 'laptop', subscriptions: 0 },
          { id: 'bare', caption: 'no label', type: 'desktop', subscriptions: 0 },
        ]),
      );
    });

    it('accepts each of the five types and refuses any other with 400', async () => {
      for (const type of ['desktop', 'laptop', 'mobile', 'server', 'other'])
        expect((await updateDevice(alice, 'd', JSON.stringify({ type }))).status).toBe(200);
      for (const type of ['phone', 'Mobile', '', 3, null])
        expect400(
          await updateDevice(alice, 'd', JSON.stringify({ type })),
          'type must be one of desktop, laptop, mobile, server, other',
        );
      expect((await devicesOf(alice)).body).toEqual([
        { id: 'd', caption: '', type: 'other', subscriptions: 0 },
      ]);
    });

    it('refuses a caption that is not a string, a body that is not a JSON object, and malformed JSON: 400', async () => {
      expect400(await updateDevice(alice, 'd', '{"caption":42}'), 'caption must be a string');
      for (const body of ['[]', 'null', '"x"', '1'])
        expect400(await updateDevice(alice, 'd', body), 'the body must be a JSON object');
      for (const body of ['{"caption":', "{'caption':'x'}", 'caption=x'])
        expect400(await updateDevice(alice, 'd', body), 'the body is not JSON');
      expect400(await updateDevice(alice, 'd', '{"caption":"\\u0000"}'), /U\+0000/);
      expect400(await updateDevice(alice, 'd', '{"__proto__":{"type":"mobile"}}'), /__proto__/);
      expect((await devicesOf(alice)).body).toEqual([]);
    });

    it('refuses a device id outside [A-Za-z0-9._-]{1,64} with 400, and creates nothing', async () => {
      expect((await updateDevice(alice, 'x'.repeat(64), '')).status).toBe(200);
      for (const device of ['x'.repeat(65), 'my%20phone', 'a:b', 't%C3%A9l', 'a%2Fb', 'a@b'])
        expect400(
          await updateDevice(alice, device, '{}'),
          'the device id must be 1 to 64 of A-Z a-z 0-9 . _ -',
        );
      expect((await devicesOf(alice)).body.map((device: { id: string }) => device.id)).toEqual([
        'x'.repeat(64),
      ]);
    });

    it('answers 400 to a path segment the router cannot read: not percent-decodable, or over 100 characters', async () => {
      for (const device of ['%zz', '%', 'd'.repeat(101), 'd'.repeat(2000)])
        expect400(await updateDevice(alice, device, '{}'));
      expect400(await app.as(alice).get(`/api/2/devices/${alice.name}%zz.json`));
      expect((await devicesOf(alice)).body).toEqual([]);
    });

    it("answers 401 for another user's path and changes nothing of theirs", async () => {
      const bob = await app.freshUser();
      const response = await app
        .as(alice)
        .request('POST', `/api/2/devices/${bob.name}/phone.json`, { rawBody: '{"caption":"mine now"}' });
      expect(response.status).toBe(401);
      expect(response.body).toEqual(errorBody(401, 'User not authorized'));
      expect((await devicesOf(bob)).body).toEqual([]);
    });
  });

  describe('a device is created by its first use', () => {
    it('on a subscriptions GET, a simple-API GET and an upload: an `other` without caption', async () => {
      expect((await app.as(alice).get(`/api/2/subscriptions/${alice.name}/first.json`)).status).toBe(200);
      expect((await app.as(alice).get(`/subscriptions/${alice.name}/second.json`)).status).toBe(200);
      expect(
        (await app.as(alice).post(`/api/2/subscriptions/${alice.name}/third.json`, { add: [], remove: [] }))
          .status,
      ).toBe(200);
      expect((await devicesOf(alice)).body).toEqual([
        { id: 'first', caption: '', type: 'other', subscriptions: 0 },
        { id: 'second', caption: '', type: 'other', subscriptions: 0 },
        { id: 'third', caption: '', type: 'other', subscriptions: 0 },
      ]);
    });

    it('but not a second time: a device used again keeps its caption and type', async () => {
      await updateDevice(alice, 'phone', '{"caption":"Phone","type":"mobile"}');
      await app.as(alice).get(`/api/2/subscriptions/${alice.name}/phone.json`);
      await app.as(alice).get(`/subscriptions/${alice.name}/phone.txt`);
      expect((await devicesOf(alice)).body).toEqual([
        { id: 'phone', caption: 'Phone', type: 'mobile', subscriptions: 0 },
      ]);
    });
  });

  describe('/api/2/sync-devices/{user}.json', () => {
    const syncOf = (user: TestUser) => app.as(user).get(`/api/2/sync-devices/${user.name}.json`);

    it('answers no group while the user has no device', async () => {
      const response = await syncOf(alice);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ synchronized: [], 'not-synchronized': [] });
    });

    it("answers one group of every device: all share the user's subscriptions", async () => {
      await updateDevice(alice, 'phone', '');
      expect((await syncOf(alice)).body).toEqual({ synchronized: [['phone']], 'not-synchronized': [] });
      await updateDevice(alice, 'laptop', '');
      await updateDevice(alice, 'desktop', '');
      expect((await syncOf(alice)).body).toEqual({
        synchronized: [['desktop', 'laptop', 'phone']],
        'not-synchronized': [],
      });
    });

    it('accepts a POST (AntennaPod and Kasts send one) and answers the same body, changing nothing', async () => {
      await updateDevice(alice, 'phone', '');
      await updateDevice(alice, 'laptop', '');
      for (const rawBody of [
        '{"synchronize":[["phone","laptop"]],"stop-synchronize":[]}',
        '{"synchronize":[],"stop-synchronize":["phone"]}',
        '',
        '{}',
      ]) {
        const response = await app.as(alice).request('POST', `/api/2/sync-devices/${alice.name}.json`, {
          rawBody,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ synchronized: [['laptop', 'phone']], 'not-synchronized': [] });
      }
      expect((await devicesOf(alice)).body.map((device: { id: string }) => device.id)).toEqual([
        'laptop',
        'phone',
      ]);
    });

    it('refuses a POST body of another shape with 400', async () => {
      for (const rawBody of [
        '{"synchronize":"phone"}',
        '{"synchronize":["phone"]}',
        '{"synchronize":[["bad device"]]}',
        '{"stop-synchronize":{}}',
        '[]',
        '{"synchronize":',
      ]) {
        const response = await app
          .as(alice)
          .request('POST', `/api/2/sync-devices/${alice.name}.json`, { rawBody });
        expect400(response);
      }
    });

    it("answers 401 for another user's path", async () => {
      const bob = await app.freshUser();
      expect((await app.as(alice).get(`/api/2/sync-devices/${bob.name}.json`)).status).toBe(401);
    });
  });
});
