import { ApiClient } from '../support/api-client';
import { feed } from '../support/contract';
import { uniqueName } from '../support/databases';
import { runCli } from '../support/processes';
import { CastlogUnderTest, childProjectorEnv, startCastlog, TestUser } from '../support/start-castlog';

/**
 * One account, two faces: what changes through the Open Podcast API (/v1) shows through the
 * gpodder.net API (/api/2 and the simple API) and back, over one log and one decider.
 *
 * - An OPA POST is in the next download's `add`; PATCH is_subscribed false is a `remove` (true
 *   again an `add`); a finalized DELETE is a `remove`.
 * - PATCH new_feed_url: the contract's download lists in `add` what the user is subscribed to
 *   now and in `remove` what the user no longer is, for a client that applies both to its own
 *   list to hold the user's list. So the new URL is in `add` and the old one in `remove`: a gpodder
 *   client that kept the old URL would otherwise hold both feeds.
 * - A gpodder upload is in GET /v1/subscriptions?since=… with is_subscribed; a removal is an
 *   unsubscription, not a deletion; an added URL matches, reinstates and normalises as an OPA
 *   POST item does.
 * - A URL two /v1 subscriptions hold (a PATCH new_feed_url moved one onto the other's) stays in the
 *   user's list while either holds it subscribed: no download removes it, a simple-API PUT of the
 *   unchanged list keeps both, and an upload adding it does not bring back a deleted holder.
 * - Episode actions are neither touched by /v1 changes nor make subscriptions.
 * - After a mix of both faces, `castlog replay --verify` finds the read model equal to a replay of
 *   the log, and `castlog history` lists the gpodder.net events beside the OPA ones.
 */

const basicOf = (user: TestUser) =>
  `Basic ${Buffer.from(`${user.name}:${user.password}`, 'utf8').toString('base64')}`;

interface Download {
  add: string[];
  remove: string[];
  timestamp: number;
}

/** The gpodder.net face for one user, with Basic credentials, expecting the routes' 200s. */
function gpodderFace(app: CastlogUnderTest, user: TestUser) {
  const client: ApiClient = app.anonymous.withAuthorization(basicOf(user));
  const ok = <T>(what: string, response: { status: number; text: string; body: T }): T => {
    if (response.status !== 200)
      throw new Error(`${what}: ${response.status} ${response.text.slice(0, 300)}`);
    return response.body;
  };
  return {
    async download(since?: number, device = 'phone'): Promise<Download> {
      const query = since === undefined ? '' : `?since=${since}`;
      return ok('download', await client.get(`/api/2/subscriptions/${user.name}/${device}.json${query}`));
    },
    async upload(
      add: string[],
      remove: string[] = [],
      device = 'phone',
    ): Promise<{ timestamp: number; update_urls: [string, string][] }> {
      return ok(
        'upload',
        await client.post(`/api/2/subscriptions/${user.name}/${device}.json`, { add, remove }),
      );
    },
    async uploadActions(actions: object[]): Promise<{ timestamp: number }> {
      return ok('episode upload', await client.post(`/api/2/episodes/${user.name}.json`, actions));
    },
    async actions(query = 'since=0'): Promise<{ actions: Record<string, unknown>[]; timestamp: number }> {
      return ok('episode download', await client.get(`/api/2/episodes/${user.name}.json?${query}`));
    },
    /** The simple API's PUT: the subscribed set becomes `urls`. */
    async replace(urls: string[], device = 'phone'): Promise<void> {
      const path = `/subscriptions/${user.name}/${device}.json`;
      ok('simple PUT', await client.request('PUT', path, { body: urls }));
    },
    /** The simple API's list of the user's subscribed feeds. */
    async subscribed(): Promise<string[]> {
      return ok<string[]>('simple list', await client.get(`/subscriptions/${user.name}.json`)).sort();
    },
  };
}

describe('the OPA face (/v1) and the gpodder.net face (/api/2) of one account', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());

  let user: TestUser;
  let opa: ApiClient;
  let gpodder: ReturnType<typeof gpodderFace>;
  beforeEach(async () => {
    user = await app.freshUser();
    opa = app.as(user);
    gpodder = gpodderFace(app, user);
  });

  const add = async (url: string): Promise<string> => {
    const response = await opa.post('/v1/subscriptions', { subscriptions: [{ feed_url: url }] });
    expect(response.status).toBe(200);
    expect(response.body.failure).toEqual([]);
    return response.body.success[0].guid;
  };
  const patch = async (guid: string, body: object) => {
    const response = await opa.patch(`/v1/subscriptions/${guid}`, body);
    expect(response.status).toBe(200);
    return response.body;
  };
  /** DELETE through /v1, then the deletion saga's result, polled on GET /v1/deletions/{id}. */
  const deleteFinalized = async (guid: string) => {
    const response = await opa.delete(`/v1/subscriptions/${guid}`);
    expect(response.status).toBe(202);
    const id = response.body.deletion_id;
    const status = await app.until(`deletion ${id} to finish`, async () => {
      const deletion = await opa.get(`/v1/deletions/${id}`);
      expect(deletion.status).toBe(200);
      return deletion.body.status === 'PENDING' ? undefined : deletion.body.status;
    });
    expect(status).toBe('SUCCESS');
  };
  /** Everything /v1 lists for the user (all pages), by feed_url. */
  const opaByUrl = async (since?: string) => {
    const items = new Map<string, any>();
    for (let page = 1; ; page += 1) {
      const query = `per_page=100&page=${page}${since === undefined ? '' : `&since=${encodeURIComponent(since)}`}`;
      const response = await opa.get(`/v1/subscriptions?${query}`);
      expect(response.status).toBe(200);
      for (const item of response.body.subscriptions) items.set(item.feed_url, item);
      if (!response.body.next) return items;
    }
  };

  describe('/v1 → /api/2', () => {
    it("an OPA POST is in the next download's add, even within the second of the timestamp sent back", async () => {
      const { timestamp } = await gpodder.download();
      const url = feed('opa-post');
      await add(url);
      const next = await gpodder.download(timestamp);
      expect(next.add).toContain(url);
      expect(next.remove).not.toContain(url);
      expect(next.timestamp).toBeGreaterThanOrEqual(timestamp);
      expect(await gpodder.subscribed()).toEqual([url]);
    });

    it('PATCH is_subscribed false is a remove, true again an add', async () => {
      const url = feed('opa-unsubscribe');
      const guid = await add(url);
      const before = (await gpodder.download()).timestamp;
      expect(await patch(guid, { is_subscribed: false })).toEqual(
        expect.objectContaining({ is_subscribed: false }),
      );
      const off = await gpodder.download(before);
      expect(off.remove).toContain(url);
      expect(off.add).not.toContain(url);
      expect(await gpodder.subscribed()).toEqual([]);

      await patch(guid, { is_subscribed: true });
      const on = await gpodder.download(off.timestamp);
      expect(on.add).toContain(url);
      expect(on.remove).not.toContain(url);
      expect(await gpodder.subscribed()).toEqual([url]);
    });

    it('PATCH new_feed_url: the new URL in add, the old one in remove, so a client ends with the new one only', async () => {
      const [old, renamed] = [feed('opa-old-url'), feed('opa-new-url')];
      const guid = await add(old);
      const first = await gpodder.download(0);
      expect(first.add).toEqual([old]);
      await patch(guid, { new_feed_url: renamed });
      const next = await gpodder.download(first.timestamp);
      expect(next.add).toContain(renamed);
      expect(next.remove).toContain(old);
      expect(next.add).not.toContain(old);
      // A client applying the two lists to what it held has the user's list.
      const held = new Set(first.add);
      next.add.forEach((url) => held.add(url));
      next.remove.forEach((url) => held.delete(url));
      expect([...held].sort()).toEqual(await gpodder.subscribed());
      expect(await gpodder.subscribed()).toEqual([renamed]);
    });

    it('a DELETE through /v1, once finalized, is a remove', async () => {
      const [kept, deleted] = [feed('opa-kept'), feed('opa-deleted')];
      await add(kept);
      const guid = await add(deleted);
      const before = (await gpodder.download()).timestamp;
      await deleteFinalized(guid);
      const next = await gpodder.download(before);
      expect(next.remove).toContain(deleted);
      expect(next.add).not.toContain(deleted);
      expect(await gpodder.subscribed()).toEqual([kept]);
      // A first sync (since 0) lists what is subscribed only.
      expect(await gpodder.download(0)).toEqual(expect.objectContaining({ add: [kept], remove: [] }));
    });
  });

  describe('/api/2 → /v1', () => {
    it('an upload is in GET /v1/subscriptions?since=… with is_subscribed; a removal is an unsubscription, not a deletion', async () => {
      const marker = await opa.post('/v1/subscriptions', { subscriptions: [{ feed_url: feed('marker') }] });
      const since = marker.body.success[0].subscription_changed;
      const [kept, dropped, fromOpa] = [feed('gp-kept'), feed('gp-dropped'), feed('opa-then-gp-removed')];
      const opaGuid = await add(fromOpa);
      await gpodder.upload([kept, dropped]);
      await gpodder.upload([], [dropped, fromOpa]);

      const changed = await opaByUrl(since);
      expect([...changed.keys()].sort()).toEqual([kept, dropped, fromOpa].sort());
      expect(changed.get(kept)).toEqual(expect.objectContaining({ is_subscribed: true }));
      expect(changed.get(dropped)).toEqual(expect.objectContaining({ is_subscribed: false }));
      expect(changed.get(fromOpa)).toEqual(expect.objectContaining({ guid: opaGuid, is_subscribed: false }));
      for (const item of changed.values()) {
        expect(item).not.toHaveProperty('deleted');
        const single = await opa.get(`/v1/subscriptions/${item.guid}`);
        expect(single.status).toBe(200);
        expect(single.body.feed_url).toBe(item.feed_url);
      }
    });

    it('a removed URL two /v1 subscriptions hold unsubscribes both: it is in remove, not in add', async () => {
      const [shared, moved] = [feed('gp-shared'), feed('gp-moved')];
      const [holder, mover] = [await add(shared), await add(moved)];
      await patch(mover, { new_feed_url: shared });
      expect(await gpodder.subscribed()).toEqual([shared]);
      const before = (await gpodder.download()).timestamp;

      await gpodder.upload([], [shared]);

      for (const guid of [holder, mover]) {
        const single = await opa.get(`/v1/subscriptions/${guid}`);
        expect(single.body).toEqual(expect.objectContaining({ feed_url: shared, is_subscribed: false }));
      }
      const next = await gpodder.download(before);
      expect(next.remove).toContain(shared);
      expect(next.add).not.toContain(shared);
      expect(await gpodder.subscribed()).toEqual([]);
    });

    describe('a URL two /v1 subscriptions hold, one of them subscribed', () => {
      // holder took shared by its POST, mover by PATCH new_feed_url: both hold it.
      let shared: string;
      let holder: string;
      let mover: string;
      /** A `since` that leaves out every change made so far: the second after the user's clock, once
       * the wall clock has passed it. */
      const sinceNow = async (): Promise<number> => {
        const { timestamp } = await gpodder.download();
        while (Math.floor(Date.now() / 1000) <= timestamp)
          await new Promise((resolve) => setTimeout(resolve, 50));
        return timestamp + 1;
      };
      beforeEach(async () => {
        shared = feed('gp-held');
        [holder, mover] = [await add(shared), await add(feed('gp-held-moved'))];
        await patch(mover, { new_feed_url: shared });
      });

      it('is no remove of a download while the other holds it, whichever was unsubscribed', async () => {
        for (const [off, on] of [
          [mover, holder],
          [holder, mover],
        ]) {
          const since = await sinceNow();
          await patch(off, { is_subscribed: false });
          // (mover's older URL is a remove each time mover changes: nothing holds it.)
          const next = await gpodder.download(since);
          expect(next.add).toEqual([]);
          expect(next.remove).not.toContain(shared);
          expect(await gpodder.subscribed()).toEqual([shared]);
          await patch(off, { is_subscribed: true });
          expect((await opa.get(`/v1/subscriptions/${on}`)).body.is_subscribed).toBe(true);
        }
      });

      it('a simple-API PUT of the unchanged list keeps both subscribed', async () => {
        const list = await gpodder.subscribed();
        const since = await sinceNow();
        await gpodder.replace(list, 'laptop');
        for (const guid of [holder, mover])
          expect((await opa.get(`/v1/subscriptions/${guid}`)).body).toEqual(
            expect.objectContaining({ feed_url: shared, is_subscribed: true }),
          );
        expect(await gpodder.download(since, 'tablet')).toEqual(
          expect.objectContaining({ add: [], remove: [] }),
        );
      });

      it('an upload adding it does not bring back the holder /v1 deleted', async () => {
        await deleteFinalized(mover);
        await gpodder.upload([shared]);
        expect((await opa.get(`/v1/subscriptions/${mover}`)).status).toBe(410);
        expect((await opa.get(`/v1/subscriptions/${holder}`)).body.is_subscribed).toBe(true);
      });
    });

    it('an added URL that /v1 deleted is reinstated: /v1 answers 200 again, subscribed', async () => {
      const url = feed('reinstated');
      const guid = await add(url);
      await deleteFinalized(guid);
      expect((await opa.get(`/v1/subscriptions/${guid}`)).status).toBe(410);
      const before = (await gpodder.download()).timestamp;
      await gpodder.upload([url]);
      const single = await opa.get(`/v1/subscriptions/${guid}`);
      expect(single.status).toBe(200);
      expect(single.body).toEqual(expect.objectContaining({ guid, feed_url: url, is_subscribed: true }));
      expect(single.body).not.toHaveProperty('deleted');
      expect((await gpodder.download(before)).add).toContain(url);
    });

    it('an added URL in another spelling lands on the /v1 subscription, and update_urls says how it is stored', async () => {
      const stored = `https://spelling.example.com/${user.name}/feed.xml`;
      const sent = `HTTPS://Spelling.EXAMPLE.com:443/${user.name}/feed.xml#latest`;
      const guid = await add(stored);
      const answer = await gpodder.upload([sent]);
      expect(answer.update_urls).toEqual([[sent, stored]]);
      const all = await opaByUrl();
      expect([...all.keys()]).toEqual([stored]);
      expect(all.get(stored).guid).toBe(guid);
    });

    it('episode actions make no subscription, and /v1 changes leave them alone', async () => {
      const podcast = feed('actions-only');
      const actions = [
        {
          podcast,
          episode: `${podcast}#1`,
          action: 'download',
          timestamp: '2024-03-01T10:00:00',
          device: 'phone',
        },
        {
          podcast,
          episode: `${podcast}#1`,
          action: 'play',
          timestamp: '2024-03-01T10:30:00',
          started: 0,
          position: 1800,
          total: 3600,
          device: 'phone',
        },
      ];
      await gpodder.uploadActions(actions);
      expect((await opa.get('/v1/subscriptions')).body.total).toBe(0);
      const recorded = (await gpodder.actions()).actions;
      expect(recorded).toEqual(actions.map((action) => expect.objectContaining(action)));

      const guid = await add(podcast);
      await patch(guid, { new_feed_url: feed('actions-renamed') });
      await patch(guid, { is_subscribed: false });
      await deleteFinalized(guid);
      expect((await gpodder.actions()).actions).toEqual(recorded);
      expect((await gpodder.actions(`since=0&podcast=${encodeURIComponent(podcast)}`)).actions).toEqual(
        recorded,
      );
    });
  });

  it('after a mix of both faces, castlog replay --verify finds no difference and castlog history shows the gpodder.net events', async () => {
    const device = await app.anonymous
      .withAuthorization(basicOf(user))
      .post(`/api/2/devices/${user.name}/phone.json`, { caption: 'Phone', type: 'mobile' });
    expect(device.status).toBe(200);
    const [a, b, c] = [feed('mix-a'), feed('mix-b'), feed('mix-c')];
    const guidA = await add(a);
    await gpodder.upload(
      [b, c, a.replace('https://mix-a.example.com/', 'HTTPS://MIX-A.example.COM:443/')],
      [],
      'laptop',
    );
    await gpodder.upload([], [a]);
    await patch(guidA, { is_subscribed: true, new_feed_url: feed('mix-a2') });
    const guidC = (await opaByUrl()).get(c).guid;
    await deleteFinalized(guidC);
    await gpodder.upload([c]);
    await gpodder.uploadActions([{ podcast: b, episode: `${b}#1`, action: 'new' }]);
    // Feed URLs trimmed of white space by the API, and gpodder.net's flattr action, replay alike.
    const d = feed('mix-d');
    expect((await gpodder.upload([`\t${d} `], [` ${b}\n`], 'laptop')).update_urls).toEqual([
      [`\t${d} `, d],
      [` ${b}\n`, b],
    ]);
    await gpodder.uploadActions([
      { podcast: ` ${d}`, episode: `${d}#1`, action: 'flattr', timestamp: '2024-01-02T03:04:05' },
    ]);

    // Everything applied and the saga's results logged before the log is replayed.
    await app.untilProjectionAtEnd();
    const { dataSource, schema } = app.runtime.database;
    await app.until('the deletion saga to log its result', async () => {
      const [row] = await dataSource.query(
        `SELECT count(*)::int AS open FROM "${schema}".deletion_saga WHERE NOT logged`,
      );
      return row.open === 0;
    });
    await app.untilProjectionAtEnd();

    const env = childProjectorEnv(app);
    const replay = await runCli(['replay', '--verify', '--schema', uniqueName('cross_face_verify')], env);
    expect({ code: replay.code, stderr: replay.code === 0 ? '' : replay.stderr }).toEqual({
      code: 0,
      stderr: '',
    });

    const history = await runCli(['history', user.name, '--json'], env);
    expect(history.code).toBe(0);
    const entries: { type: string; request: string; result: string; outcome: unknown }[] = JSON.parse(
      history.stdout,
    );
    expect(entries.map((entry) => entry.type)).toEqual(
      expect.arrayContaining([
        'DeviceUpdateRequested',
        'GpodderUploadRequested',
        'EpisodeActionsUploaded',
        'SubscriptionsAddRequested',
        'SubscriptionUpdateRequested',
        'DeletionRequested',
        'DeletionCompleted',
      ]),
    );
    for (const entry of entries) {
      expect(entry.outcome).not.toBeNull();
      expect(entry.request).not.toBe('');
      expect(entry.result).not.toBe('not applied yet');
    }
    // The subscription's own history holds the gpodder.net upload that unsubscribed it.
    const one = await runCli(['history', user.name, '--guid', guidA, '--json'], env);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout).map((entry: { type: string }) => entry.type)).toEqual(
      expect.arrayContaining([
        'SubscriptionsAddRequested',
        'GpodderUploadRequested',
        'SubscriptionUpdateRequested',
      ]),
    );
    const table = await runCli(['history', user.name], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/GpodderUploadRequested/);
  }, 180_000);
});
