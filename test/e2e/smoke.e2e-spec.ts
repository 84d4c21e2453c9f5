import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

describe('walking skeleton', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => {
    app = await startCastlog();
  });
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  it('answers the write, and the next GET sees it', async () => {
    const post = await app.as(alice).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://a.example/rss' }] });
    expect(post.status).toBe(200);
    expect(post.body.success).toHaveLength(1);
    const list = await app.as(alice).get('/v1/subscriptions');
    expect(list.status).toBe(200);
    expect(list.body.subscriptions).toContainEqual(expect.objectContaining({ guid: post.body.success[0].guid }));
  });
});
