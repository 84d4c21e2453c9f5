import { parseRfc3339Micros, toIsoMicros } from '@castlog/domain';
import { randomUUID } from 'node:crypto';
import { feed } from '../support/contract';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';
import { SyncAction, SyncChange, SyncClient, syncAction, syncClientOf } from '../support/sync-face';

/**
 * The sync draft's last-write-wins rules end to end (CONTRACT.md, "Last write wins, per part",
 * "Idempotency", "Clocks", and the applied-time cursor of GET /api/v1/sync):
 *
 * - an action whose occurred_at equals its part's time is ignored; one a microsecond later
 *   applies; digits past the microsecond are cut; offsets are read, answers are UTC with Z;
 * - a change a client made offline and uploads late reaches the other clients at their next sync,
 *   though its occurred_at (its last_updated) is older than their cursor;
 * - a retry with the same action_id answers the first status with the entity as it is now, and
 *   changes nothing, also after another action changed the entity and when another client sends
 *   it; the same action_id with other data is rejected, and a rejected action stays rejected.
 *
 * (test/e2e/sync-draft.e2e-spec.ts has the route's own rules: 0 or 31 actions, shapes, statuses.)
 */

/** The machine's clock (the service's) in microseconds. */
const nowMicros = (): number => Date.now() * 1000;
/** Microseconds as an occurred_at, and as the service answers times: UTC, six digits, Z. */
const iso = toIsoMicros;
const MINUTE = 60_000_000;
/** The changes one request makes come in an order of castlog's: compare them as a set. */
const bySyncId = (changes: readonly SyncChange[]) =>
  [...changes].sort((a, b) => a.data.sync_id.localeCompare(b.data.sync_id));

describe('sync draft: last write wins, retries and the applied-time cursor', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());

  let user: TestUser;
  let phone: SyncClient;
  let laptop: SyncClient;
  beforeEach(async () => {
    user = await app.freshUser();
    phone = syncClientOf(app, `Bearer ${user.token}`);
    laptop = syncClientOf(app, `Bearer ${user.token}`);
  });

  const subscribed = async (occurredAt: number, url = feed('lww')) => {
    const [result] = await phone.sync([syncAction('subscribe', { feed_url: url }, iso(occurredAt))]);
    expect(result!.status).toBe('applied');
    return result!.data;
  };

  describe('ties and microseconds', () => {
    it('an action at its part time is ignored, one a microsecond later applies', async () => {
      const t = nowMicros() - 10 * MINUTE;
      const entity = await subscribed(t);
      expect(entity.subscribed_at).toBe(iso(t));
      const [tie] = await laptop.sync([syncAction('unsubscribe', { sync_id: entity.sync_id }, iso(t))]);
      expect(tie).toEqual(expect.objectContaining({ status: 'ignored', data: entity }));
      // The identity part was written by the creating subscribe at t too.
      const [updateTie] = await laptop.sync([
        syncAction('update', { sync_id: entity.sync_id, feed_url: feed('lww-tie') }, iso(t)),
      ]);
      expect(updateTie).toEqual(expect.objectContaining({ status: 'ignored', data: entity }));

      const [later] = await laptop.sync([syncAction('unsubscribe', { sync_id: entity.sync_id }, iso(t + 1))]);
      expect(later).toEqual(
        expect.objectContaining({ status: 'applied', data: { ...entity, unsubscribed_at: iso(t + 1) } }),
      );
      // Nine digits are cut to six: t + 1.999 µs is t + 1 µs, a tie again.
      const [cut] = await phone.sync([
        syncAction('subscribe', { feed_url: entity.feed_url }, `${iso(t + 1)}`.replace('Z', '999Z')),
      ]);
      expect(cut).toEqual(expect.objectContaining({ status: 'ignored' }));
      expect(cut!.data.unsubscribed_at).toBe(iso(t + 1));
      const [resubscribed] = await phone.sync([
        syncAction('subscribe', { feed_url: entity.feed_url }, iso(t + 2)),
      ]);
      expect(resubscribed!.data).toEqual({ ...entity, subscribed_at: iso(t + 2) });
    });

    it('reads any fraction and offset, and answers UTC with six digits and Z', async () => {
      const t = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
      const shifted = new Date(t + 2 * 3_600_000).toISOString().slice(0, 19);
      const entity = await subscribed(t * 1000);
      // Two hours ahead, written +02:00: the same instant as the subscribe, so a tie.
      const [tie] = await laptop.sync([
        syncAction('unsubscribe', { sync_id: entity.sync_id }, `${shifted}+02:00`),
      ]);
      expect(tie!.status).toBe('ignored');
      const [one] = await laptop.sync([
        syncAction('unsubscribe', { sync_id: entity.sync_id }, `${shifted}.1+02:00`),
      ]);
      expect(one!.status).toBe('applied');
      expect(one!.data.unsubscribed_at).toBe(`${new Date(t).toISOString().slice(0, 19)}.100000Z`);
    });

    it('older actions lose whatever order they arrive in: per part, an unsubscribe is not made stale by a later update', async () => {
      const t = nowMicros() - 30 * MINUTE;
      const entity = await subscribed(t);
      const renamed = feed('lww-renamed');
      // Arrives first, occurred last: an update at t+3. Then an unsubscribe at t+2, then a
      // subscribe at t+1, both older than the update but on the other part.
      const results = await laptop.sync([
        syncAction('update', { sync_id: entity.sync_id, feed_url: renamed }, iso(t + 3 * MINUTE)),
      ]);
      expect(results[0]!.status).toBe('applied');
      const [unsubscribe] = await phone.sync([
        syncAction('unsubscribe', { sync_id: entity.sync_id }, iso(t + 2 * MINUTE)),
      ]);
      expect(unsubscribe!.status).toBe('applied');
      const [subscribe] = await phone.sync([
        syncAction('subscribe', { feed_url: entity.feed_url }, iso(t + 1 * MINUTE)),
      ]);
      expect(subscribe!.status).toBe('ignored');
      const single = await phone.subscription(entity.sync_id);
      expect(single.body).toEqual({ ...entity, feed_url: renamed, unsubscribed_at: iso(t + 2 * MINUTE) });
    });

    it('actions of one request apply in occurred_at order, results come in request order', async () => {
      const t = nowMicros() - 5 * MINUTE;
      const entity = await subscribed(t);
      const unsubscribe = syncAction('unsubscribe', { sync_id: entity.sync_id }, iso(t + 2));
      const subscribe = syncAction('subscribe', { feed_url: entity.feed_url }, iso(t + 1));
      const results = await laptop.sync([unsubscribe, subscribe]);
      expect(results.map((result) => [result.action_id, result.status])).toEqual([
        [unsubscribe.action_id, 'applied'],
        [subscribe.action_id, 'ignored'],
      ]);
      expect((await phone.subscription(entity.sync_id)).body.unsubscribed_at).toBe(iso(t + 2));
    });

    it('an occurred_at more than one hour ahead is rejected, one within the hour applies', async () => {
      const url = feed('lww-future');
      const [ahead, within] = await phone.sync([
        syncAction('subscribe', { feed_url: url }, iso(nowMicros() + 61 * MINUTE)),
        syncAction('subscribe', { feed_url: feed('lww-soon') }, iso(nowMicros() + 50 * MINUTE)),
      ]);
      expect(ahead).toEqual(
        expect.objectContaining({
          status: 'rejected',
          reason: expect.any(String),
          data: { feed_url: url },
        }),
      );
      expect(within!.status).toBe('applied');
      expect(await phone.subscriptions()).toEqual([within!.data]);
    });
  });

  describe('the applied-time cursor', () => {
    it('a late upload of an offline client reaches the others, though it occurred before their cursor', async () => {
      const t = nowMicros() - 40 * MINUTE;
      const entity = await subscribed(t);
      const early = await laptop.changes();
      expect(early.changes.map((change) => change.data)).toEqual([entity]);
      const since = early.since!;
      const tablet = syncClientOf(app, `Bearer ${user.token}`);
      // Made offline 30 minutes ago, after the subscribe, uploaded now.
      const offline = [
        syncAction('unsubscribe', { sync_id: entity.sync_id }, iso(t + 10 * MINUTE)),
        syncAction('subscribe', { feed_url: feed('lww-offline') }, iso(t + 10 * MINUTE + 1)),
      ];
      const results = await tablet.sync(offline);
      expect(results.map((result) => result.status)).toEqual(['applied', 'applied']);
      expect(parseRfc3339Micros(since)).toBeGreaterThan(t + 10 * MINUTE + 1);

      const late = await laptop.changes({ since });
      expect(bySyncId(late.changes)).toEqual(
        bySyncId([
          {
            type: 'subscription',
            last_updated: iso(t + 10 * MINUTE),
            data: { ...entity, unsubscribed_at: iso(t + 10 * MINUTE) },
          },
          { type: 'subscription', last_updated: iso(t + 10 * MINUTE + 1), data: results[1]!.data },
        ]),
      );
      // Followed again later, the cursor gives nothing new; the uploader does not get its own back.
      expect((await laptop.changes({ since: late.since })).changes).toEqual([]);
      expect((await tablet.changes({ since })).changes).toEqual([]);
    });

    it("pages of one request's many changes neither skip nor repeat one", async () => {
      const t = nowMicros() - MINUTE;
      const actions = Array.from({ length: 30 }, (_, i) =>
        syncAction('subscribe', { feed_url: feed(`lww-page-${i}`) }, iso(t + i)),
      );
      const results = await phone.sync(actions);
      expect(results.every((result) => result.status === 'applied')).toBe(true);
      for (const limit of [1, 7, 30]) {
        const { changes, pages } = await laptop.changes({ limit });
        expect(changes.map((change) => change.data.sync_id).sort()).toEqual(
          results.map((result) => result.data.sync_id).sort(),
        );
        expect(pages).toBe(Math.ceil(30 / limit));
      }
    });
  });

  describe('retries', () => {
    it('the same action_id answers its first status with the entity as it is now, and changes nothing', async () => {
      const t = nowMicros() - 20 * MINUTE;
      const entity = await subscribed(t);
      const unsubscribe = syncAction('unsubscribe', { sync_id: entity.sync_id }, iso(t + MINUTE));
      const [first] = await laptop.sync([unsubscribe]);
      expect(first!.status).toBe('applied');
      const { since } = await phone.changes();
      const [retried] = await laptop.sync([unsubscribe]);
      expect(retried).toEqual(first);
      // Not a change: nothing new for the others.
      expect((await phone.changes({ since })).changes).toEqual([]);

      // Later the phone resubscribes; a retry of the old unsubscribe still answers applied, with
      // the entity as it is now, and does not unsubscribe it again.
      const [resubscribe] = await phone.sync([
        syncAction('subscribe', { feed_url: entity.feed_url }, iso(t + 2 * MINUTE)),
      ]);
      expect(resubscribe!.status).toBe('applied');
      const [again] = await laptop.sync([unsubscribe]);
      expect(again).toEqual({ ...first, data: resubscribe!.data });
      expect((await phone.subscription(entity.sync_id)).body.unsubscribed_at).toBeUndefined();
      // A retry sent from another client is the same action too.
      const [elsewhere] = await phone.sync([unsubscribe]);
      expect(elsewhere!.status).toBe('applied');
      expect((await phone.subscription(entity.sync_id)).body.unsubscribed_at).toBeUndefined();
    });

    it('the same action_id with other data is rejected; a rejected action is remembered as rejected', async () => {
      const t = nowMicros() - 10 * MINUTE;
      const entity = await subscribed(t);
      const unknown = syncAction('unsubscribe', { sync_id: randomUUID() }, iso(t + 1));
      const [notFound] = await phone.sync([unknown]);
      expect(notFound).toEqual(expect.objectContaining({ status: 'rejected', reason: 'Entity not found' }));
      // Once rejected, always rejected: the same action_id now naming a real entity is another action.
      const reused: SyncAction = { ...unknown, data: { sync_id: entity.sync_id } };
      const [other] = await phone.sync([reused]);
      expect(other).toEqual(expect.objectContaining({ status: 'rejected', reason: expect.any(String) }));
      expect((await phone.subscription(entity.sync_id)).body.unsubscribed_at).toBeUndefined();
      expect(await phone.sync([unknown])).toEqual([notFound]);
    });
  });
});
