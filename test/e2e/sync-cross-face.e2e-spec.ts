import { normalizeFeedUrl, parseRfc3339Micros, podcastGuidOf } from '@castlog/domain';
import { randomUUID } from 'node:crypto';
import { ApiClient } from '../support/api-client';
import { feed, guid, UUID } from '../support/contract';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';
import { basicOf, draftLogin, SyncChange, SyncClient, syncAction, syncClientOf } from '../support/sync-face';

/**
 * One account through its three faces — the Open Podcast API (/v1), gpodder.net (/api/2) and the
 * sync draft (/api/v1) — over one log and one decider (CONTRACT.md, "The Open Podcast API sync
 * draft", "Across faces"):
 *
 * - a subscription made on /v1 or gpodder.net has a sync_id and shows on GET /api/v1/sync, with
 *   the guid /v1 shows; one made by a sync subscribe shows on /v1 (same guid) and in a gpodder.net
 *   download;
 * - a sync unsubscribe is is_subscribed false on /v1 and a gpodder.net remove; a gpodder.net
 *   remove is an unsubscribe on the sync face; a finalized /v1 DELETE is an unsubscribe at the
 *   deletion's time; a /v1 PATCH of new_feed_url or new_guid is an update, and a sync update is a
 *   feed_url change on /v1;
 * - include_own=false leaves out what the asking Client-ID changed last, never a change made
 *   through /v1 or gpodder.net;
 * - a token from either login works on every face.
 */

const micros = (text: string): number => {
  const value = parseRfc3339Micros(text);
  if (value === undefined) throw new Error(`not an RFC 3339 date-time: ${text}`);
  return value;
};
/** A time /v1 answers (milliseconds) as the sync face writes it (microseconds, Z). */
const asSyncTime = (iso: string): string => iso.replace(/Z$/, '000Z');
/** An occurred_at `ms` milliseconds from now on the machine's clock, which the service's follows. */
const at = (ms = 0): string => new Date(Date.now() + ms).toISOString();

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('one account through /v1, gpodder.net and the sync draft', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());

  let user: TestUser;
  let opa: ApiClient;
  let gpodder: ApiClient;
  let phone: SyncClient;
  let laptop: SyncClient;
  beforeEach(async () => {
    user = await app.freshUser();
    opa = app.as(user);
    gpodder = app.anonymous.withAuthorization(basicOf(user));
    phone = syncClientOf(app, `Bearer ${user.token}`);
    laptop = syncClientOf(app, `Bearer ${user.token}`);
  });

  const add = async (url: string, subscriptionGuid?: string) => {
    const response = await opa.post('/v1/subscriptions', {
      subscriptions: [
        { feed_url: url, ...(subscriptionGuid === undefined ? {} : { guid: subscriptionGuid }) },
      ],
    });
    expect(response.status).toBe(200);
    expect(response.body.failure).toEqual([]);
    return response.body.success[0] as { guid: string; subscription_changed: string };
  };
  const opaGet = async (subscriptionGuid: string) => {
    const response = await opa.get(`/v1/subscriptions/${subscriptionGuid}`);
    expect(response.status).toBe(200);
    return response.body;
  };
  const download = async (since: number) => {
    const response = await gpodder.get(`/api/2/subscriptions/${user.name}/phone.json?since=${since}`);
    expect(response.status).toBe(200);
    return response.body as { add: string[]; remove: string[]; timestamp: number };
  };
  /** The sync face's change of the subscription with this guid, as a client with no cursor sees it. */
  const changeOf = async (client: SyncClient, subscriptionGuid: string, since?: string) => {
    const { changes } = await client.changes({ includeOwn: true, ...(since === undefined ? {} : { since }) });
    const found = changes.filter((change) => change.data.guid === subscriptionGuid);
    expect(found).toHaveLength(1);
    return found[0] as SyncChange;
  };

  describe('/v1 and gpodder.net → sync', () => {
    it('a /v1 POST shows on GET /api/v1/sync with a sync_id, and GET /api/v1/subscriptions/{sync_id} answers it', async () => {
      const url = feed('opa-to-sync');
      const posted = await add(url, guid());
      const change = await changeOf(phone, posted.guid);
      expect(change).toEqual({
        type: 'subscription',
        last_updated: asSyncTime(posted.subscription_changed),
        data: {
          sync_id: expect.stringMatching(UUID_V4),
          guid: posted.guid,
          feed_url: url,
          subscribed_at: asSyncTime(posted.subscription_changed),
        },
      });
      const single = await phone.subscription(change.data.sync_id);
      expect(single.status).toBe(200);
      expect(single.body).toEqual(change.data);
      // Made through /v1, it comes from no client: every client sees it without include_own.
      expect((await laptop.changes()).changes).toEqual([change]);
      expect((await phone.changes()).changes).toEqual([change]);
    });

    it('a gpodder.net upload shows as a subscribe, and its remove as an unsubscribe at the time castlog applied it', async () => {
      const url = feed('gpodder-to-sync');
      const uploaded = await gpodder.post(`/api/2/subscriptions/${user.name}/phone.json`, {
        add: [url],
        remove: [],
      });
      expect(uploaded.status).toBe(200);
      const { changes, since } = await phone.changes();
      expect(changes.map((change) => change.data.feed_url)).toEqual([url]);
      const subscribed = changes[0]!;
      const listed = await opa.get('/v1/subscriptions');
      expect(subscribed.data.guid).toBe(listed.body.subscriptions[0].guid);

      const before = Date.now();
      const removed = await gpodder.post(`/api/2/subscriptions/${user.name}/phone.json`, {
        add: [],
        remove: [url],
      });
      expect(removed.status).toBe(200);
      const after = await phone.changes({ since });
      expect(after.changes).toEqual([
        {
          type: 'subscription',
          last_updated: expect.any(String),
          data: { ...subscribed.data, unsubscribed_at: after.changes[0]?.last_updated },
        },
      ]);
      const unsubscribedAt = micros(after.changes[0]!.last_updated) / 1000;
      expect(unsubscribedAt).toBeGreaterThanOrEqual(before - 1);
      expect(unsubscribedAt).toBeLessThanOrEqual(Date.now() + 1);
      expect(Math.floor(unsubscribedAt / 1000)).toBeLessThanOrEqual(removed.body.timestamp);
    });

    it('a /v1 DELETE, once finalized, shows as an unsubscribe at the deletion time', async () => {
      const url = feed('opa-deleted');
      const posted = await add(url);
      const { changes, since } = await laptop.changes();
      const syncId = changes[0]!.data.sync_id;
      const deletion = await opa.delete(`/v1/subscriptions/${posted.guid}`);
      expect(deletion.status).toBe(202);
      const finished = await app.until('the deletion to finish', async () => {
        const status = await opa.get(`/v1/deletions/${deletion.body.deletion_id}`);
        return status.body.status === 'PENDING' ? undefined : (status.body.status as string);
      });
      expect(finished).toBe('SUCCESS');
      const listed = await opa.get('/v1/subscriptions');
      const deleted: string = listed.body.subscriptions[0].deleted;
      expect(deleted).toEqual(expect.any(String));

      const after = await laptop.changes({ since });
      expect(after.changes).toEqual([
        {
          type: 'subscription',
          last_updated: asSyncTime(deleted),
          data: {
            sync_id: syncId,
            guid: posted.guid,
            feed_url: url,
            subscribed_at: asSyncTime(posted.subscription_changed),
            unsubscribed_at: asSyncTime(deleted),
          },
        },
      ]);
      expect((await laptop.subscription(syncId)).body).toEqual(after.changes[0]!.data);
      // Not subscribed, so not in the default list; listed with include_unsubscribed.
      expect(await laptop.subscriptions()).toEqual([]);
      expect(await laptop.subscriptions({ includeUnsubscribed: true })).toEqual([after.changes[0]!.data]);
    });

    it('a /v1 PATCH of new_feed_url, then of new_guid, shows as an update of the same sync_id', async () => {
      const url = feed('opa-patched');
      const posted = await add(url);
      const first = await phone.changes();
      const syncId = first.changes[0]!.data.sync_id;

      const renamed = feed('opa-patched-new');
      const patched = await opa.patch(`/v1/subscriptions/${posted.guid}`, { new_feed_url: renamed });
      expect(patched.status).toBe(200);
      const second = await phone.changes({ since: first.since });
      expect(second.changes).toEqual([
        {
          type: 'subscription',
          last_updated: asSyncTime(patched.body.subscription_changed),
          data: { ...first.changes[0]!.data, feed_url: renamed },
        },
      ]);

      const newGuid = guid();
      const regrouped = await opa.patch(`/v1/subscriptions/${posted.guid}`, { new_guid: newGuid });
      expect(regrouped.status).toBe(200);
      const third = await phone.changes({ since: second.since });
      expect(third.changes).toEqual([
        {
          type: 'subscription',
          last_updated: asSyncTime(regrouped.body.guid_changed),
          data: { ...second.changes[0]!.data, guid: newGuid },
        },
      ]);
      expect(third.changes[0]!.data.sync_id).toBe(syncId);
    });

    it('a /v1 PATCH is_subscribed false and true again shows as unsubscribe and subscribe', async () => {
      const posted = await add(feed('opa-toggled'));
      const first = await phone.changes();
      const off = await opa.patch(`/v1/subscriptions/${posted.guid}`, { is_subscribed: false });
      const second = await phone.changes({ since: first.since });
      expect(second.changes.map((change) => change.data)).toEqual([
        { ...first.changes[0]!.data, unsubscribed_at: asSyncTime(off.body.subscription_changed) },
      ]);
      const on = await opa.patch(`/v1/subscriptions/${posted.guid}`, { is_subscribed: true });
      const third = await phone.changes({ since: second.since });
      expect(third.changes.map((change) => change.data)).toEqual([
        { ...first.changes[0]!.data, subscribed_at: asSyncTime(on.body.subscription_changed) },
      ]);
    });
  });

  describe('sync → /v1 and gpodder.net', () => {
    it('a sync subscribe shows on /v1 with the same guid and in the gpodder.net download', async () => {
      const { timestamp } = await download(0);
      const [derivedUrl, givenUrl, givenGuid] = [feed('sync-derived'), feed('sync-given'), guid()];
      const results = await phone.sync([
        syncAction('subscribe', { feed_url: derivedUrl }, at(-2)),
        syncAction('subscribe', { feed_url: givenUrl, guid: givenGuid }, at(-1)),
      ]);
      expect(results.map((result) => result.status)).toEqual(['applied', 'applied']);
      const derivedGuid = podcastGuidOf(normalizeFeedUrl(derivedUrl));
      expect(results.map((result) => result.data.guid)).toEqual([derivedGuid, givenGuid]);

      for (const [url, subscriptionGuid] of [
        [derivedUrl, derivedGuid],
        [givenUrl, givenGuid],
      ] as const)
        expect(await opaGet(subscriptionGuid)).toEqual(
          expect.objectContaining({ guid: subscriptionGuid, feed_url: url, is_subscribed: true }),
        );
      const next = await download(timestamp);
      expect(next.add.sort()).toEqual([derivedUrl, givenUrl].sort());
      expect(next.remove).toEqual([]);
    });

    it('a sync unsubscribe is is_subscribed false on /v1 and a remove on gpodder.net; a resubscribe undoes both', async () => {
      const url = feed('sync-unsubscribed');
      const [subscribed] = await phone.sync([syncAction('subscribe', { feed_url: url }, at(-3))]);
      const { timestamp } = await download(0);
      const [unsubscribed] = await phone.sync([
        syncAction('unsubscribe', { sync_id: subscribed!.data.sync_id }, at(-2)),
      ]);
      expect(unsubscribed!.status).toBe('applied');
      expect(await opaGet(subscribed!.data.guid)).toEqual(expect.objectContaining({ is_subscribed: false }));
      const off = await download(timestamp);
      expect(off).toEqual(expect.objectContaining({ add: [], remove: [url] }));

      const [resubscribed] = await laptop.sync([syncAction('subscribe', { feed_url: url }, at(-1))]);
      expect(resubscribed).toEqual(
        expect.objectContaining({
          status: 'applied',
          data: expect.objectContaining({ sync_id: subscribed!.data.sync_id }),
        }),
      );
      expect(resubscribed!.data.unsubscribed_at).toBeUndefined();
      expect(await opaGet(subscribed!.data.guid)).toEqual(expect.objectContaining({ is_subscribed: true }));
      const on = await download(off.timestamp);
      expect(on).toEqual(expect.objectContaining({ add: [url], remove: [] }));
    });

    it('a sync update of feed_url is a feed_url change on /v1, and the old URL still matches', async () => {
      const url = feed('sync-updated');
      const [subscribed] = await phone.sync([syncAction('subscribe', { feed_url: url }, at(-2))]);
      const renamed = feed('sync-updated-new');
      const [updated] = await phone.sync([
        syncAction('update', { sync_id: subscribed!.data.sync_id, feed_url: renamed }, at(-1)),
      ]);
      expect(updated).toEqual(
        expect.objectContaining({ status: 'applied', data: { ...subscribed!.data, feed_url: renamed } }),
      );
      expect(await opaGet(subscribed!.data.guid)).toEqual(
        expect.objectContaining({ feed_url: renamed, is_subscribed: true }),
      );
      const simple = await gpodder.get(`/subscriptions/${user.name}.json`);
      expect(simple.body).toEqual([renamed]);
      // A /v1 POST of the old URL lands on the same subscription.
      const again = await add(url);
      expect(again.guid).toBe(subscribed!.data.guid);
    });

    it('a sync subscribe of a feed /v1 holds, in another spelling, matches it and leaves it as it is', async () => {
      const url = `https://spelled-${randomUUID()}.example.com/rss`;
      const posted = await add(url, guid());
      const respelled = url.replace('https://', 'HTTPS://').replace('.com/', '.com:443/');
      const [result] = await phone.sync([syncAction('subscribe', { feed_url: respelled }, at())]);
      expect(result).toEqual(
        expect.objectContaining({
          status: 'ignored',
          data: expect.objectContaining({ guid: posted.guid, feed_url: url }),
        }),
      );
      const listed = await opa.get('/v1/subscriptions');
      expect(listed.body.subscriptions).toHaveLength(1);
    });
  });

  describe('include_own and Client-ID', () => {
    it("leaves out what the asking client changed last unless include_own=true, never another face's change", async () => {
      const [mine, theirs, opaUrl] = [feed('own-phone'), feed('own-laptop'), feed('own-opa')];
      await phone.sync([syncAction('subscribe', { feed_url: mine }, at(-3))]);
      await laptop.sync([syncAction('subscribe', { feed_url: theirs }, at(-2))]);
      await add(opaUrl);
      const urls = async (client: SyncClient, includeOwn?: boolean) =>
        (await client.changes(includeOwn === undefined ? {} : { includeOwn })).changes.map(
          (change) => change.data.feed_url,
        );
      expect(await urls(phone)).toEqual([theirs, opaUrl]);
      expect(await urls(phone, false)).toEqual([theirs, opaUrl]);
      expect(await urls(phone, true)).toEqual([mine, theirs, opaUrl]);
      expect(await urls(laptop)).toEqual([mine, opaUrl]);
      // The same installation in capitals is the same client.
      const shouting = syncClientOf(app, `Bearer ${user.token}`, phone.clientId.toUpperCase());
      expect(await urls(shouting)).toEqual([theirs, opaUrl]);

      // The laptop unsubscribes the phone's subscription: now the phone sees it, the laptop does not.
      const phoneSync = (await phone.changes({ includeOwn: true })).changes.find(
        (change) => change.data.feed_url === mine,
      )!;
      await laptop.sync([syncAction('unsubscribe', { sync_id: phoneSync.data.sync_id }, at(-1))]);
      expect(await urls(phone)).toEqual([theirs, opaUrl, mine]);
      expect(await urls(laptop)).toEqual([opaUrl]);
      // GET /api/v1/subscriptions lists every subscription whoever changed it.
      expect(
        (await phone.subscriptions({ includeUnsubscribed: true })).map((e) => e.feed_url).sort(),
      ).toEqual([mine, theirs, opaUrl].sort());
    });
  });

  describe('tokens', () => {
    it('a token from /auth/login works on /v1 and gpodder.net, and one from /v1/auth/login on the sync face', async () => {
      const draft = await draftLogin(app, user);
      const draftBearer = app.anonymous.withAuthorization(`Bearer ${draft.access_token}`);
      expect((await draftBearer.get('/v1/subscriptions')).status).toBe(200);
      expect((await draftBearer.get(`/api/2/devices/${user.name}.json`)).status).toBe(200);

      const refreshed = await app.anonymous.post('/auth/refresh', { refresh_token: draft.refresh_token });
      expect(refreshed.status).toBe(200);
      const refreshedBearer = app.anonymous.withAuthorization(`Bearer ${refreshed.body.access_token}`);
      expect((await refreshedBearer.get('/v1/subscriptions')).status).toBe(200);
      expect((await syncClientOf(app, `Bearer ${refreshed.body.access_token}`).changes()).changes).toEqual(
        [],
      );

      const v1 = await app.anonymous.post('/v1/auth/login', { username: user.name, password: user.password });
      expect(v1.status).toBe(200);
      const fromV1 = syncClientOf(app, `Bearer ${v1.body.access_token}`);
      const [result] = await fromV1.sync([syncAction('subscribe', { feed_url: feed('v1-token') }, at())]);
      expect(result!.status).toBe('applied');
      expect((await fromV1.subscription(result!.data.sync_id)).status).toBe(200);
      // Basic works too, and the entity is the user's whichever credentials wrote it.
      const basic = syncClientOf(app, basicOf(user));
      expect((await basic.subscriptions()).map((entity) => entity.sync_id)).toEqual([result!.data.sync_id]);
      expect(result!.data.sync_id).toMatch(UUID);
    });

    it("another user's sync_id is 404 and their changes are not listed", async () => {
      const [result] = await phone.sync([syncAction('subscribe', { feed_url: feed('private') }, at())]);
      const other = await app.freshUser();
      const stranger = syncClientOf(app, `Bearer ${other.token}`);
      const single = await stranger.subscription(result!.data.sync_id);
      expect(single.status).toBe(404);
      expect(single.body).toEqual({ code: '404', message: 'Resource not found' });
      expect((await stranger.changes()).changes).toEqual([]);
      expect(await stranger.subscriptions({ includeUnsubscribed: true })).toEqual([]);
      // Naming it in an action is naming nothing.
      const [unsubscribe] = await stranger.sync([
        syncAction('unsubscribe', { sync_id: result!.data.sync_id }, at()),
      ]);
      expect(unsubscribe).toEqual(
        expect.objectContaining({ status: 'rejected', reason: 'Entity not found' }),
      );
    });
  });
});
