import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';
import { feed, guid, ISO_MS, UUID, VALIDATION } from '../support/contract';

describe('POST /v1/subscriptions', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  const add = (items: unknown[]) => app.as(alice).post('/v1/subscriptions', { subscriptions: items });

  it('adds new feeds, answering one success item per valid item with a server guid and both arrays', async () => {
    const [a, b] = [feed('a'), feed('b')];
    const response = await add([{ feed_url: a }, { feed_url: b }]);
    expect(response.status).toBe(200);
    expect(response.body.failure).toEqual([]);
    expect(response.body.success).toEqual([
      {
        feed_url: a,
        guid: expect.stringMatching(UUID),
        is_subscribed: true,
        subscription_changed: expect.stringMatching(ISO_MS),
      },
      {
        feed_url: b,
        guid: expect.stringMatching(UUID),
        is_subscribed: true,
        subscription_changed: expect.stringMatching(ISO_MS),
      },
    ]);
    expect(response.body.success[0].guid).not.toBe(response.body.success[1].guid);
    expect(response.headers.get('content-type')).toMatch(/^application\/json; charset=utf-8/);
  });

  it('keeps a client guid as authoritative', async () => {
    const g = guid();
    const response = await add([{ feed_url: feed(), guid: g }]);
    expect(response.body.success[0].guid).toBe(g);
    expect((await app.as(alice).get(`/v1/subscriptions/${g}`)).status).toBe(200);
  });

  it('reports each invalid item in failure with the contract message, in request order', async () => {
    const ok = feed();
    const long = `https://example.com/${'a'.repeat(2049)}`;
    const response = await add([
      { feed_url: 'example.com/rss' },
      { feed_url: ok },
      { feed_url: 'ftp://example.com/rss' },
      { feed_url: 'https://exa mple.com/rss' },
      { feed_url: long },
      { feed_url: feed(), guid: 'not-a-uuid' },
      { feed_url: 42 },
      {},
      { feed_url: null },
    ]);
    expect(response.status).toBe(200);
    expect(response.body.success).toEqual([expect.objectContaining({ feed_url: ok })]);
    expect(response.body.failure).toEqual([
      { feed_url: 'example.com/rss', message: 'No protocol present' },
      { feed_url: 'ftp://example.com/rss', message: 'Unsupported protocol' },
      { feed_url: 'https://exa mple.com/rss', message: 'Invalid URL' },
      { feed_url: long, message: 'Invalid URL' },
      { feed_url: expect.stringMatching(/^https:/), message: 'Invalid guid' },
      { feed_url: '42', message: 'Invalid URL' },
      { feed_url: '', message: 'Invalid URL' },
      { feed_url: 'null', message: 'Invalid URL' },
    ]);
  });

  it('accepts a URL of exactly 2048 characters', async () => {
    const base = `https://example.com/`;
    const url = base + 'a'.repeat(2048 - base.length);
    const response = await add([{ feed_url: url }]);
    expect(response.body.success).toHaveLength(1);
  });

  it('matches an existing subscription by feed_url after normalising scheme, host, default port and fragment', async () => {
    const id = guid();
    const path = `/${guid()}/rss`;
    await add([{ feed_url: `https://a.example.com${path}`, guid: id }]);
    const again = await add([{ feed_url: `HTTPS://A.Example.COM:443${path}#top` }]);
    expect(again.body.success).toEqual([
      expect.objectContaining({ guid: id, feed_url: `https://a.example.com${path}`, is_subscribed: true }),
    ]);
    const list = await app.as(alice).get('/v1/subscriptions');
    expect(list.body.total).toBe(1);
  });

  it('matches by any guid the subscription has had, and by any feed_url it has had', async () => {
    const [g1, g2] = [guid(), guid()];
    const [first, second] = [feed('first'), feed('second')];
    await add([{ feed_url: first, guid: g1 }]);
    await app.as(alice).patch(`/v1/subscriptions/${g1}`, { new_guid: g2, new_feed_url: second });
    const byOldGuid = await add([{ feed_url: feed('third'), guid: g1 }]);
    expect(byOldGuid.body.success[0].guid).toBe(g2);
    const byOldUrl = await add([{ feed_url: first }]);
    expect(byOldUrl.body.success[0].guid).toBe(g2);
    expect((await app.as(alice).get('/v1/subscriptions')).body.total).toBe(1);
  });

  it('makes a guid sent for a feed_url match the latest guid (a guid change)', async () => {
    const url = feed();
    const created = await add([{ feed_url: url }]);
    const original = created.body.success[0].guid;
    const g = guid();
    const changed = await add([{ feed_url: url, guid: g }]);
    expect(changed.body.success[0].guid).toBe(g);
    const one = await app.as(alice).get(`/v1/subscriptions/${original}`);
    expect(one.body).toEqual(
      expect.objectContaining({ guid: original, new_guid: g, guid_changed: expect.stringMatching(ISO_MS) }),
    );
  });

  it('lets the guid win when the guid names one subscription and the feed_url another', async () => {
    const [ga, gb] = [guid(), guid()];
    const [a, b] = [feed('a'), feed('b')];
    await add([
      { feed_url: a, guid: ga },
      { feed_url: b, guid: gb },
    ]);
    const response = await add([{ feed_url: b, guid: ga }]);
    expect(response.body.success).toEqual([expect.objectContaining({ guid: ga, feed_url: b })]);
    const other = await app.as(alice).get(`/v1/subscriptions/${gb}`);
    expect(other.body).toEqual(expect.objectContaining({ guid: gb, feed_url: b }));
    const matched = await app.as(alice).get(`/v1/subscriptions/${ga}`);
    expect(matched.body.feed_url).toBe(b);
  });

  it('ends items of one request that match each other as one subscription, answering the same guid', async () => {
    const path = `/${guid()}/rss`;
    const response = await add([
      { feed_url: `https://same.example.com${path}` },
      { feed_url: `HTTPS://SAME.example.com:443${path}#again` },
      { feed_url: feed('other') },
    ]);
    const [first, second, third] = response.body.success;
    expect(second.guid).toBe(first.guid);
    expect(second.feed_url).toBe(first.feed_url);
    expect(third.guid).not.toBe(first.guid);
    expect((await app.as(alice).get('/v1/subscriptions')).body.total).toBe(2);
  });

  it('reinstates a deleted subscription', async () => {
    const g = guid();
    const url = feed();
    await add([{ feed_url: url, guid: g }]);
    const deletion = await app.as(alice).delete(`/v1/subscriptions/${g}`);
    await app.until('deletion succeeds', async () => {
      const status = await app.as(alice).get(`/v1/deletions/${deletion.body.deletion_id}`);
      return status.body.status === 'SUCCESS';
    });
    expect((await app.as(alice).get(`/v1/subscriptions/${g}`)).status).toBe(410);
    const back = await add([{ feed_url: url }]);
    expect(back.body.success).toEqual([expect.objectContaining({ guid: g, is_subscribed: true })]);
    const one = await app.as(alice).get(`/v1/subscriptions/${g}`);
    expect(one.status).toBe(200);
    expect(one.body.deleted).toBeUndefined();
  });

  it('sets is_subscribed true and a new subscription_changed on a match', async () => {
    const g = guid();
    const url = feed();
    const created = await add([{ feed_url: url, guid: g }]);
    await app.as(alice).patch(`/v1/subscriptions/${g}`, { is_subscribed: false });
    const again = await add([{ feed_url: url }]);
    expect(again.body.success[0].is_subscribed).toBe(true);
    expect(Date.parse(again.body.success[0].subscription_changed)).toBeGreaterThan(
      Date.parse(created.body.success[0].subscription_changed),
    );
  });

  it('accepts 1000 items and refuses 1001 or none', async () => {
    const thousand = Array.from({ length: 1000 }, (_, i) => ({
      feed_url: `https://bulk.example.com/${i}/${guid()}`,
    }));
    const ok = await add(thousand);
    expect(ok.status).toBe(200);
    expect(ok.body.success).toHaveLength(1000);
    const tooMany = await add([...thousand, { feed_url: feed() }]);
    expect(tooMany.status).toBe(405);
    expect(tooMany.body).toEqual(VALIDATION());
    const none = await add([]);
    expect(none.status).toBe(405);
  });

  it('refuses a body that is not an object, lacks subscriptions, or holds a non-object item, and changes nothing', async () => {
    for (const body of [
      [],
      'text',
      42,
      null,
      {},
      { subscriptions: 'x' },
      { subscriptions: [{ feed_url: feed() }, 7] },
    ]) {
      const response = await app
        .as(alice)
        .request('POST', '/v1/subscriptions', { rawBody: JSON.stringify(body) });
      expect(response.status).toBe(405);
      expect(response.body).toEqual(VALIDATION());
    }
    expect((await app.as(alice).get('/v1/subscriptions')).body.total).toBe(0);
  });

  it('refuses a body holding a number beyond a double (the log would keep it as null), and changes nothing', async () => {
    for (const rawBody of [
      `{"subscriptions":[{"feed_url":"${feed()}","guid":1e400}]}`,
      `{"subscriptions":[{"feed_url":-1e400}]}`,
    ]) {
      const response = await app.as(alice).request('POST', '/v1/subscriptions', { rawBody });
      expect(response.status).toBe(405);
      expect(response.body).toEqual(VALIDATION('numbers must be finite (a number as large as 1e400 is not)'));
    }
    expect((await app.as(alice).get('/v1/subscriptions')).body.total).toBe(0);
  });

  it('answers with the write applied: the next read sees it', async () => {
    const url = feed();
    const response = await add([{ feed_url: url }]);
    const one = await app.as(alice).get(`/v1/subscriptions/${response.body.success[0].guid}`);
    expect(one.status).toBe(200);
    expect(one.body.feed_url).toBe(url);
  });

  it('ends 20 concurrent POSTs of the same new feed as exactly one subscription', async () => {
    const url = feed();
    const responses = await Promise.all(Array.from({ length: 20 }, () => add([{ feed_url: url }])));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const guids = new Set(responses.map((r) => r.body.success[0].guid));
    expect(guids.size).toBe(1);
    const list = await app.as(alice).get('/v1/subscriptions');
    expect(list.body.total).toBe(1);
  });
});

describe('POST /v1/subscriptions from many users at once', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());

  it('answers every request with its own outcome when one projector transaction releases them together', async () => {
    const users = await Promise.all(Array.from({ length: 16 }, () => app.freshUser()));
    const requests = users.map((user) => ({
      user,
      items: [
        { feed_url: feed('own-a'), guid: guid() },
        { feed_url: feed('own-b'), guid: guid() },
      ],
    }));
    const responses = await Promise.all(
      requests.map(({ user, items }) => app.as(user).post('/v1/subscriptions', { subscriptions: items })),
    );
    responses.forEach((response, i) => {
      expect(response.status).toBe(200);
      expect(response.body.failure).toEqual([]);
      expect(
        response.body.success.map((s: { feed_url: string; guid: string }) => [s.feed_url, s.guid]),
      ).toEqual(requests[i]!.items.map((item) => [item.feed_url, item.guid]));
    });
  });
});
