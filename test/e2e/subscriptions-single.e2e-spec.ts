import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';
import { errorBody, feed, guid, ISO_MS, VALIDATION } from '../support/contract';

describe('one subscription: GET, PATCH and DELETE /v1/subscriptions/{guid}, GET /v1/deletions/{id}', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  const as = () => app.as(alice);
  const create = async (g = guid(), url = feed()) => {
    await as().post('/v1/subscriptions', { subscriptions: [{ feed_url: url, guid: g }] });
    return { g, url };
  };
  const deleteAndWait = async (g: string) => {
    const response = await as().delete(`/v1/subscriptions/${g}`);
    expect(response.status).toBe(202);
    await app.until('deletion finishes', async () => {
      const status = await as().get(`/v1/deletions/${response.body.deletion_id}`);
      return status.body.status !== 'PENDING';
    });
    return response.body.deletion_id as number;
  };

  describe('GET /v1/subscriptions/{guid}', () => {
    it('answers the subscription', async () => {
      const { g, url } = await create();
      const response = await as().get(`/v1/subscriptions/${g}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        feed_url: url,
        guid: g,
        is_subscribed: true,
        subscription_changed: expect.stringMatching(ISO_MS),
      });
    });

    it('resolves any guid of the chain, answering the path guid and the latest as new_guid', async () => {
      const { g } = await create();
      const [g2, g3] = [guid(), guid()];
      await as().patch(`/v1/subscriptions/${g}`, { new_guid: g2 });
      await as().patch(`/v1/subscriptions/${g2}`, { new_guid: g3 });
      for (const path of [g, g2]) {
        const response = await as().get(`/v1/subscriptions/${path}`);
        expect(response.body).toEqual(
          expect.objectContaining({ guid: path, new_guid: g3, guid_changed: expect.stringMatching(ISO_MS) }),
        );
      }
      const latest = await as().get(`/v1/subscriptions/${g3}`);
      expect(latest.body.guid).toBe(g3);
      expect(latest.body.new_guid).toBeUndefined();
    });

    it('answers 404 for an unknown guid, 405 for one that is not a UUID, 410 once deleted', async () => {
      expect((await as().get(`/v1/subscriptions/${guid()}`)).body).toEqual(
        errorBody(404, 'Resource not found'),
      );
      const bad = await as().get('/v1/subscriptions/not-a-uuid');
      expect(bad.status).toBe(405);
      expect(bad.body).toEqual(VALIDATION());
      const { g } = await create();
      await deleteAndWait(g);
      const gone = await as().get(`/v1/subscriptions/${g}`);
      expect(gone.status).toBe(410);
      expect(gone.body).toEqual(errorBody(410, 'Subscription has been deleted'));
    });

    it('accepts an upper-case path guid as the same guid', async () => {
      const { g } = await create();
      const response = await as().get(`/v1/subscriptions/${g.toUpperCase()}`);
      expect(response.status).toBe(200);
      expect(response.body.guid).toBe(g);
    });
  });

  describe('PATCH /v1/subscriptions/{guid}', () => {
    it('changes the feed_url and answers only what changed', async () => {
      const { g } = await create();
      const url = feed('moved');
      const response = await as().patch(`/v1/subscriptions/${g}`, { new_feed_url: url });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        new_feed_url: url,
        subscription_changed: expect.stringMatching(ISO_MS),
      });
      expect((await as().get(`/v1/subscriptions/${g}`)).body.feed_url).toBe(url);
    });

    it('sets is_subscribed', async () => {
      const { g } = await create();
      const response = await as().patch(`/v1/subscriptions/${g}`, { is_subscribed: false });
      expect(response.body).toEqual({
        is_subscribed: false,
        subscription_changed: expect.stringMatching(ISO_MS),
      });
      expect((await as().get(`/v1/subscriptions/${g}`)).body.is_subscribed).toBe(false);
    });

    it('appends a new guid to the chain', async () => {
      const { g } = await create();
      const g2 = guid();
      const response = await as().patch(`/v1/subscriptions/${g}`, { new_guid: g2 });
      expect(response.body).toEqual({ new_guid: g2, guid_changed: expect.stringMatching(ISO_MS) });
      expect((await as().get(`/v1/subscriptions/${g2}`)).body.guid).toBe(g2);
    });

    it('answers the guid as it stands for a new_guid the chain already has, changing nothing', async () => {
      const { g } = await create();
      expect((await as().patch(`/v1/subscriptions/${g}`, { new_guid: g })).body).toEqual({ new_guid: g });
      const g2 = guid();
      const appended = await as().patch(`/v1/subscriptions/${g}`, { new_guid: g2 });
      const before = (await as().get(`/v1/subscriptions/${g}`)).body;
      const again = await as().patch(`/v1/subscriptions/${g2}`, { new_guid: g.toUpperCase() });
      expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: appended.body });
      expect((await as().get(`/v1/subscriptions/${g}`)).body).toEqual(before);
    });

    it('acts on the latest entry of the chain when addressed by an old guid', async () => {
      const { g } = await create();
      const [g2, g3] = [guid(), guid()];
      await as().patch(`/v1/subscriptions/${g}`, { new_guid: g2 });
      const response = await as().patch(`/v1/subscriptions/${g}`, { new_guid: g3, is_subscribed: false });
      expect(response.body).toEqual({
        new_guid: g3,
        guid_changed: expect.stringMatching(ISO_MS),
        is_subscribed: false,
        subscription_changed: expect.stringMatching(ISO_MS),
      });
      expect((await as().get('/v1/subscriptions')).body.subscriptions).toEqual([
        expect.objectContaining({ guid: g, new_guid: g3, is_subscribed: false }),
      ]);
    });

    it('merges into the user existing subscription that has the new guid', async () => {
      const { g: a } = await create();
      const { g: b, url: bUrl } = await create();
      const response = await as().patch(`/v1/subscriptions/${a}`, { new_guid: b });
      expect(response.body).toEqual({ new_guid: b, guid_changed: expect.stringMatching(ISO_MS) });
      const merged = await as().get(`/v1/subscriptions/${a}`);
      expect(merged.body).toEqual(expect.objectContaining({ guid: a, new_guid: b, feed_url: bUrl }));
      const patched = await as().patch(`/v1/subscriptions/${a}`, { is_subscribed: false });
      expect(patched.status).toBe(200);
      expect((await as().get(`/v1/subscriptions/${b}`)).body.is_subscribed).toBe(false);
    });

    it('refuses bodies without a known field or with badly typed fields, and changes nothing', async () => {
      const { g, url } = await create();
      for (const body of [
        {},
        { other: 1 },
        { new_guid: 'x' },
        { is_subscribed: 'yes' },
        { new_feed_url: 'ftp://x.example' },
        [],
        'x',
      ]) {
        const response = await as().request('PATCH', `/v1/subscriptions/${g}`, {
          rawBody: JSON.stringify(body),
        });
        expect(response.status).toBe(405);
        expect(response.body).toEqual(VALIDATION());
      }
      const after = await as().get(`/v1/subscriptions/${g}`);
      expect(after.body).toEqual(expect.objectContaining({ feed_url: url, is_subscribed: true }));
    });

    it('answers 404 for an unknown guid and 410 for a deleted subscription', async () => {
      expect((await as().patch(`/v1/subscriptions/${guid()}`, { is_subscribed: true })).status).toBe(404);
      const { g } = await create();
      await deleteAndWait(g);
      const gone = await as().patch(`/v1/subscriptions/${g}`, { is_subscribed: true });
      expect(gone.status).toBe(410);
      expect(gone.body).toEqual(errorBody(410, 'Subscription has been deleted'));
    });
  });

  describe('DELETE /v1/subscriptions/{guid} and GET /v1/deletions/{id}', () => {
    it('accepts with 202 and a deletion id, visible at once, then finalizes to SUCCESS', async () => {
      const { g, url } = await create();
      const response = await as().delete(`/v1/subscriptions/${g}`);
      expect(response.status).toBe(202);
      expect(response.body).toEqual({
        deletion_id: expect.any(Number),
        message: 'Deletion request was received and will be processed',
      });
      const id = response.body.deletion_id;
      expect(Number.isInteger(id) && id >= 1).toBe(true);
      const right = await as().get(`/v1/deletions/${id}`);
      expect(right.status).toBe(200);
      expect(['PENDING', 'SUCCESS']).toContain(right.body.status);
      await app.until(
        'SUCCESS',
        async () => (await as().get(`/v1/deletions/${id}`)).body.status === 'SUCCESS',
      );
      expect((await as().get(`/v1/deletions/${id}`)).body).toEqual({
        deletion_id: id,
        status: 'SUCCESS',
        message: 'Subscription deleted successfully',
      });
      const [item] = (await as().get('/v1/subscriptions')).body.subscriptions;
      expect(item).toEqual({
        feed_url: url,
        guid: g,
        is_subscribed: false,
        subscription_changed: item.deleted,
        deleted: expect.stringMatching(ISO_MS),
      });
    });

    it('answers the same deletion id for a repeated DELETE, pending or done', async () => {
      const { g } = await create();
      const first = await as().delete(`/v1/subscriptions/${g}`);
      const second = await as().delete(`/v1/subscriptions/${g}`);
      expect(second.status).toBe(202);
      expect(second.body.deletion_id).toBe(first.body.deletion_id);
      await app.until(
        'SUCCESS',
        async () => (await as().get(`/v1/deletions/${first.body.deletion_id}`)).body.status === 'SUCCESS',
      );
      const third = await as().delete(`/v1/subscriptions/${g}`);
      expect(third.status).toBe(202);
      expect(third.body.deletion_id).toBe(first.body.deletion_id);
    });

    it('gives a new deletion id after a reinstating POST', async () => {
      const { g, url } = await create();
      const first = await deleteAndWait(g);
      await as().post('/v1/subscriptions', { subscriptions: [{ feed_url: url }] });
      const second = await deleteAndWait(g);
      expect(second).not.toBe(first);
    });

    it('answers 404 for an unknown guid or deletion, 405 for a guid that is not a UUID or an id that is not a positive integer', async () => {
      expect((await as().delete(`/v1/subscriptions/${guid()}`)).body).toEqual(
        errorBody(404, 'Resource not found'),
      );
      expect((await as().get('/v1/deletions/999999999')).body).toEqual(errorBody(404, 'Resource not found'));
      expect((await as().get(`/v1/deletions/${'9'.repeat(20)}`)).body).toEqual(
        errorBody(404, 'Resource not found'),
      );
      expect((await as().delete('/v1/subscriptions/nope')).status).toBe(405);
      for (const id of ['0', '-1', 'abc', '1.5']) {
        const response = await as().get(`/v1/deletions/${id}`);
        expect(response.status).toBe(405);
        expect(response.body).toEqual(VALIDATION());
      }
    });

    it('reports FAILURE and rolls everything back when the finalizing transaction fails', async () => {
      const { g, url } = await create();
      const schema = app.runtime.database.schema;
      const dataSource = app.runtime.database.dataSource;
      // A real database failure inside the saga's transaction, for this subscription only.
      await dataSource.query(`
        CREATE OR REPLACE FUNCTION "${schema}".refuse_deletion() RETURNS trigger AS $$
        BEGIN RAISE EXCEPTION 'injected failure'; END $$ LANGUAGE plpgsql`);
      await dataSource.query(`
        CREATE TRIGGER refuse_deletion BEFORE UPDATE ON "${schema}".subscriptions FOR EACH ROW
        WHEN (NEW.deleted IS NOT NULL AND OLD.deleted IS NULL AND OLD.id = '${g}') EXECUTE FUNCTION "${schema}".refuse_deletion()`);
      try {
        const response = await as().delete(`/v1/subscriptions/${g}`);
        const id = response.body.deletion_id;
        await app.until(
          'FAILURE',
          async () => (await as().get(`/v1/deletions/${id}`)).body.status === 'FAILURE',
        );
        expect((await as().get(`/v1/deletions/${id}`)).body).toEqual({
          deletion_id: id,
          status: 'FAILURE',
          message: 'The deletion process encountered an error and was rolled back',
        });
        const still = await as().get(`/v1/subscriptions/${g}`);
        expect(still.status).toBe(200);
        expect(still.body).toEqual(expect.objectContaining({ feed_url: url, is_subscribed: true }));
        expect(still.body.deleted).toBeUndefined();
        await dataSource.query(`DROP TRIGGER refuse_deletion ON "${schema}".subscriptions`);
        const retry = await deleteAndWait(g);
        expect(retry).not.toBe(id);
        expect((await as().get(`/v1/deletions/${retry}`)).body.status).toBe('SUCCESS');
      } finally {
        await dataSource.query(`DROP TRIGGER IF EXISTS refuse_deletion ON "${schema}".subscriptions`);
      }
    });
  });
});
