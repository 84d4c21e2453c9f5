import { ApiResponse } from '../support/api-client';
import { errorBody } from '../support/contract';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

const basic = (name: string, password: string) =>
  `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;

describe('app passwords', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  let bob: TestUser;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());
  beforeEach(async () => {
    alice = await app.freshUser();
    bob = await app.freshUser();
  });

  /** `GET /v1/subscriptions` and gpodder.net's `GET /api/2/devices/{user}.json` as `user`. */
  const bothFaces = async (user: string, password: string): Promise<ApiResponse[]> => {
    const client = app.anonymous.withAuthorization(basic(user, password));
    return [
      await client.get('/v1/subscriptions'),
      await client.get(`/api/2/devices/${encodeURIComponent(user)}.json`),
    ];
  };
  const statuses = (responses: ApiResponse[]) => responses.map((response) => response.status);

  it('work as the Basic password on /v1 and on the gpodder.net face, beside the main password', async () => {
    const { password } = await app.users.createAppPassword(alice.id, 'Kasts');
    const [v1, gpodder] = await bothFaces(alice.name, password);
    expect(v1!.status).toBe(200);
    expect(v1!.body).toMatchObject({ subscriptions: [] });
    expect(gpodder!.status).toBe(200);
    expect(gpodder!.body).toEqual([]);
    expect(statuses(await bothFaces(alice.name, alice.password))).toEqual([200, 200]);
  });

  it('answer 401 on the very next request once revoked, on both faces', async () => {
    const revoked = await app.users.createAppPassword(alice.id, 'lost phone');
    const kept = await app.users.createAppPassword(alice.id, 'laptop');
    expect(statuses(await bothFaces(alice.name, revoked.password))).toEqual([200, 200]);

    expect(await app.users.revokeAppPassword(alice.id, revoked.id)).toBe(true);
    const [v1, gpodder] = await bothFaces(alice.name, revoked.password);
    expect(v1!.status).toBe(401);
    expect(v1!.body).toEqual(errorBody(401, 'User not authorized'));
    expect(gpodder!.status).toBe(401);
    expect(gpodder!.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
    expect(statuses(await bothFaces(alice.name, kept.password))).toEqual([200, 200]);
    expect(statuses(await bothFaces(alice.name, alice.password))).toEqual([200, 200]);
  });

  it("are 401 with another user's name", async () => {
    const { password } = await app.users.createAppPassword(alice.id, 'Kasts');
    expect(statuses(await bothFaces(bob.name, password))).toEqual([401, 401]);
    expect(statuses(await bothFaces(bob.name, bob.password))).toEqual([200, 200]);
  });
});
