import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';
import { connect } from 'node:net';
import { feed, guid, ISO_MS, VALIDATION } from '../support/contract';

/** What the server answers to `request` sent as is on a new connection (HTTP/1.0: it then closes). */
const rawHttp10 = (port: number, request: string): Promise<string> =>
  new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });

describe('GET /v1/subscriptions', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  const add = (items: unknown[]) => app.as(alice).post('/v1/subscriptions', { subscriptions: items });
  const list = (query = '') => app.as(alice).get(`/v1/subscriptions${query}`);
  const addMany = async (n: number) => {
    const guids: string[] = [];
    for (let i = 0; i < n; i += 1)
      guids.push((await add([{ feed_url: feed(`n${i}`) }])).body.success[0].guid);
    return guids;
  };

  it('lists everything without since, with page 1 and per_page 50 by default', async () => {
    const [g1, g2] = await addMany(2);
    const response = await list();
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      total: 2,
      page: 1,
      per_page: 50,
      subscriptions: [
        {
          feed_url: expect.any(String),
          guid: g1,
          is_subscribed: true,
          subscription_changed: expect.stringMatching(ISO_MS),
        },
        {
          feed_url: expect.any(String),
          guid: g2,
          is_subscribed: true,
          subscription_changed: expect.stringMatching(ISO_MS),
        },
      ],
    });
  });

  it('lists only subscriptions whose change time is strictly greater than since', async () => {
    const [, g2] = await addMany(2);
    const all = await list();
    const firstTime = all.body.subscriptions[0].subscription_changed;
    const after = await list(`?since=${encodeURIComponent(firstTime)}`);
    expect(after.body.subscriptions.map((s: { guid: string }) => s.guid)).toEqual([g2]);
    expect(after.body.total).toBe(1);
  });

  it('accepts since with any offset, with or without a fraction, and reads one without an offset as UTC', async () => {
    const [g1] = await addMany(1);
    const t = Date.parse((await list()).body.subscriptions[0].subscription_changed);
    const before = new Date(t - 1000);
    const plus2 = new Date(before.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    const noFraction = new Date(t - 2000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const noOffset = new Date(t - 1000).toISOString().replace('Z', '');
    for (const since of [plus2, noFraction, noOffset]) {
      const response = await list(`?since=${encodeURIComponent(since)}`);
      expect(response.status).toBe(200);
      expect(response.body.subscriptions.map((s: { guid: string }) => s.guid)).toEqual([g1]);
    }
    const exact = new Date(t).toISOString().replace('Z', '-00:00');
    expect((await list(`?since=${encodeURIComponent(exact)}`)).body.total).toBe(0);
    // A `+` left unencoded reads as a space in a query string; the zero time of Go and others.
    for (const since of [plus2, '0001-01-01T00:00:00Z']) {
      const response = await list(`?since=${since}`);
      expect(response.status).toBe(200);
      expect(response.body.subscriptions.map((s: { guid: string }) => s.guid)).toEqual([g1]);
    }
  });

  it('answers 200 with an empty page for a since in the future', async () => {
    await addMany(1);
    const response = await list('?since=2999-01-01T00:00:00Z');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ total: 0, page: 1, per_page: 50, subscriptions: [] });
  });

  it('pages in change-time order with total and absolute next/previous carrying since and per_page', async () => {
    const guids = await addMany(5);
    const since = '2000-01-01T00:00:00.000Z';
    const first = await list(`?since=${since}&per_page=2`);
    expect(first.body.total).toBe(5);
    expect(first.body.previous).toBeUndefined();
    const next = new URL(first.body.next);
    expect(next.origin).toBe(new URL(app.url).origin);
    expect(next.pathname).toBe('/v1/subscriptions');
    expect(Object.fromEntries(next.searchParams)).toEqual({
      since,
      page: '2',
      per_page: '2',
      after: expect.stringMatching(/^\d+_[0-9a-f-]{36}$/),
    });
    const second = await app.as(alice).get(first.body.next);
    const third = await app.as(alice).get(second.body.next);
    expect(third.body.next).toBeUndefined();
    expect(new URL(third.body.previous).searchParams.get('page')).toBe('2');
    const seen = [first, second, third].flatMap((r) =>
      r.body.subscriptions.map((s: { guid: string }) => s.guid),
    );
    expect(seen).toEqual(guids);
    const past = await list(`?page=9&per_page=2`);
    expect(past.status).toBe(200);
    expect(past.body.subscriptions).toEqual([]);
    expect(past.body.total).toBe(5);
  });

  it('follows next links past a change made between two pages without losing a subscription', async () => {
    const guids = await addMany(4);
    const first = await list('?per_page=2');
    expect(first.body.subscriptions.map((s: { guid: string }) => s.guid)).toEqual(guids.slice(0, 2));
    // Another client changes the first item: it moves to the end of the order.
    const changed = await app.as(alice).patch(`/v1/subscriptions/${guids[0]}`, { is_subscribed: false });
    expect(changed.status).toBe(200);
    const second = await app.as(alice).get(first.body.next);
    const third = second.body.next ? await app.as(alice).get(second.body.next) : undefined;
    const rest = [second, ...(third ? [third] : [])].flatMap((r) =>
      r.body.subscriptions.map((s: { guid: string }) => s.guid),
    );
    expect(rest).toEqual([guids[2], guids[3], guids[0]]);
    expect((third ?? second).body.next).toBeUndefined();
  });

  it('refuses an after that no next link carries', async () => {
    for (const after of ['x', '12', `12_${guid()}_1`, '1_not-a-guid', `${'9'.repeat(16)}_${guid()}`]) {
      const response = await list(`?after=${encodeURIComponent(after)}`);
      expect(response.status).toBe(405);
      expect(response.body).toEqual({
        code: '405',
        message: 'Input could not be validated: after must be the value a next link carries',
      });
    }
  });

  it('builds links from the address reached when the Host header is missing or names more than a host', async () => {
    await addMany(2);
    const { hostname, port } = new URL(app.url);
    for (const hostLine of ['', 'Host: evil.example:99/x?\r\n']) {
      const answer = await rawHttp10(
        Number(port),
        `GET /v1/subscriptions?per_page=1 HTTP/1.0\r\n${hostLine}Authorization: Bearer ${alice.token}\r\n\r\n`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(body.next).toMatch(
        new RegExp(`^http://${hostname}:${port}/v1/subscriptions\\?page=2&per_page=1&after=`),
      );
    }
  });

  it('builds links after PUBLIC_URL when it is set', async () => {
    const proxied = await startCastlog({ env: { PUBLIC_URL: 'https://podcasts.example.org/castlog/' } });
    try {
      const user = await proxied.freshUser();
      for (let i = 0; i < 2; i += 1)
        await proxied.as(user).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed(`p${i}`) }] });
      const second = await proxied.as(user).get('/v1/subscriptions?per_page=1&page=2');
      expect(second.body.previous).toBe(
        'https://podcasts.example.org/castlog/v1/subscriptions?page=1&per_page=1',
      );
      const first = await proxied.as(user).get('/v1/subscriptions?per_page=1');
      expect(first.body.next).toMatch(
        /^https:\/\/podcasts\.example\.org\/castlog\/v1\/subscriptions\?page=2&/,
      );
    } finally {
      await proxied.close();
    }
  });

  it('serves per_page above 100 as 100 and reports it', async () => {
    const response = await list('?per_page=500');
    expect(response.body.per_page).toBe(100);
  });

  it('answers an empty page, with total, for a page past the last however many digits it has', async () => {
    await addMany(1);
    const response = await list(`?page=${'9'.repeat(20)}&per_page=100`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(expect.objectContaining({ total: 1, subscriptions: [] }));
  });

  it('refuses page and per_page that are not integers >= 1, and since that is not a date-time', async () => {
    for (const query of [
      '?page=0',
      '?page=x',
      '?per_page=0',
      '?per_page=-1',
      '?per_page=2.5',
      '?since=yesterday',
      '?since=2024-13-01T00:00:00Z',
    ]) {
      const response = await list(query);
      expect(response.status).toBe(405);
      expect(response.body).toEqual(VALIDATION());
    }
  });

  it('orders by change time, then guid within one instant', async () => {
    const [a, b, c] = [guid(), guid(), guid()];
    await add([
      { feed_url: feed('a'), guid: a },
      { feed_url: feed('b'), guid: b },
      { feed_url: feed('c'), guid: c },
    ]);
    const response = await list();
    expect(response.body.subscriptions.map((s: { guid: string }) => s.guid)).toEqual([a, b, c].sort());
  });

  it('lists deleted subscriptions with deleted', async () => {
    const [g] = await addMany(1);
    const deletion = await app.as(alice).delete(`/v1/subscriptions/${g}`);
    await app.until(
      'deletion succeeds',
      async () =>
        (await app.as(alice).get(`/v1/deletions/${deletion.body.deletion_id}`)).body.status === 'SUCCESS',
    );
    const response = await list();
    const [item] = response.body.subscriptions;
    expect(item).toEqual(
      expect.objectContaining({ guid: g, is_subscribed: false, deleted: expect.stringMatching(ISO_MS) }),
    );
    expect(item.deleted).toBe(item.subscription_changed);
  });

  it('shows the guid as of since and the latest guid as new_guid after a chain of guid changes', async () => {
    const [g1, g2, g3] = [guid(), guid(), guid()];
    await add([{ feed_url: feed(), guid: g1 }]);
    const first = await app.as(alice).patch(`/v1/subscriptions/${g1}`, { new_guid: g2 });
    const between = first.body.guid_changed;
    await app.as(alice).patch(`/v1/subscriptions/${g2}`, { new_guid: g3 });

    const all = await list();
    expect(all.body.total).toBe(1);
    expect(all.body.subscriptions[0]).toEqual(
      expect.objectContaining({ guid: g1, new_guid: g3, guid_changed: expect.stringMatching(ISO_MS) }),
    );
    const since = await list(`?since=${encodeURIComponent(between)}`);
    expect(since.body.subscriptions).toEqual([expect.objectContaining({ guid: g2, new_guid: g3 })]);
  });

  it('leaves new_guid out when the guid shown is the latest', async () => {
    const [g1, g2] = [guid(), guid()];
    await add([{ feed_url: feed(), guid: g1 }]);
    const changed = await app.as(alice).patch(`/v1/subscriptions/${g1}`, { new_guid: g2 });
    const later = await app.as(alice).patch(`/v1/subscriptions/${g2}`, { is_subscribed: false });
    expect(later.status).toBe(200);
    const response = await list(`?since=${encodeURIComponent(changed.body.guid_changed)}`);
    expect(response.body.subscriptions).toEqual([expect.objectContaining({ guid: g2 })]);
    expect(response.body.subscriptions[0].new_guid).toBeUndefined();
  });

  it('never lets a client that syncs with since = the largest timestamp seen miss a change made by another client', async () => {
    const writer = app.as(alice);
    const writes = (async () => {
      for (let i = 0; i < 30; i += 1) {
        await writer.post('/v1/subscriptions', {
          subscriptions: [{ feed_url: `https://sync.example.com/${i}` }],
        });
      }
    })();
    const seen = new Set<string>();
    let since: string | undefined;
    let done = false;
    void writes.then(() => (done = true));
    for (let round = 0; round < 1000 && !(done && round > 0 && seen.size === 30); round += 1) {
      let url: string | undefined =
        `/v1/subscriptions?per_page=7${since ? `&since=${encodeURIComponent(since)}` : ''}`;
      let largest = since;
      while (url) {
        const page: {
          body: { subscriptions: { feed_url: string; subscription_changed: string }[]; next?: string };
        } = await app.as(alice).get(url);
        for (const item of page.body.subscriptions) {
          seen.add(item.feed_url);
          if (!largest || item.subscription_changed > largest) largest = item.subscription_changed;
        }
        url = page.body.next;
      }
      since = largest;
      if (done) {
        const rest = await app
          .as(alice)
          .get(`/v1/subscriptions?per_page=100${since ? `&since=${encodeURIComponent(since)}` : ''}`);
        for (const item of rest.body.subscriptions) seen.add(item.feed_url);
        break;
      }
    }
    await writes;
    expect(seen.size).toBe(30);
  });
});
