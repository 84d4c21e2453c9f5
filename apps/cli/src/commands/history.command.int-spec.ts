import { feed, guid, ISO_MS } from '../../../../test/support/contract';
import { CastlogUnderTest, startCastlog, TestUser } from '../../../../test/support/start-castlog';
import { syncAction } from '../../../../libs/domain/src/testing';
import { soon, syncIdOfUser, syncThroughLog } from '../../../../test/support/sync-through-log';
import { LogEvent, normalizeFeedUrl } from '@castlog/domain';
import { envelopeOf } from '@castlog/event-log';
import { history, HistoryDeps, HistoryEntry } from './history.command';

function io() {
  const stdout = { text: '', write: (chunk: string) => (stdout.text += chunk) };
  const stderr = { text: '', write: (chunk: string) => (stderr.text += chunk) };
  return { stdout, stderr };
}

describe('castlog history', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  /** alice's subscriptions: `a` (added, unsubscribed, re-guided to a2, deleted), `b` (merged into a2),
   * `c` (added alone, untouched afterwards). */
  const [a, a2, b, c] = [guid(), guid(), guid(), guid()];
  const [aUrl, bUrl, cUrl] = [feed('a'), feed('b'), feed('c')];
  let deletionId: number;

  const deps = (): HistoryDeps & ReturnType<typeof io> => ({
    ...io(),
    dataSource: app.runtime.database.dataSource,
    eventLog: app.runtime.eventLog,
    schema: app.runtime.database.schema,
  });

  const json = async (user: string, guidFilter?: string): Promise<HistoryEntry[]> => {
    const d = deps();
    expect(await history(d, user, { json: true, guid: guidFilter })).toBe(0);
    return JSON.parse(d.stdout.text) as HistoryEntry[];
  };

  beforeAll(async () => {
    app = await startCastlog();
    alice = await app.freshUser();
    const bob = await app.freshUser();
    const as = app.as(alice);
    const ok = (status: number) => expect(status).toBe(200);
    ok(
      (
        await as.post('/v1/subscriptions', {
          subscriptions: [
            { feed_url: aUrl, guid: a },
            { feed_url: bUrl, guid: b },
          ],
        })
      ).status,
    );
    ok((await app.as(bob).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed() }] })).status);
    ok((await as.post('/v1/subscriptions', { subscriptions: [{ feed_url: cUrl, guid: c }] })).status);
    ok((await as.patch(`/v1/subscriptions/${a}`, { is_subscribed: false })).status);
    ok((await as.patch(`/v1/subscriptions/${a}`, { new_guid: a2 })).status);
    ok((await as.patch(`/v1/subscriptions/${b}`, { new_guid: a2 })).status);
    expect((await as.patch(`/v1/subscriptions/${guid()}`, { is_subscribed: true })).status).toBe(404);
    const deletion = await as.delete(`/v1/subscriptions/${a}`);
    expect(deletion.status).toBe(202);
    deletionId = deletion.body.deletion_id;
    await app.until('the deletion is logged and applied', async () => {
      const entries = await json(alice.name);
      return entries.some((entry) => entry.type === 'DeletionCompleted' && entry.result === 'recorded');
    });
    expect((await as.patch(`/v1/subscriptions/${a2}`, { is_subscribed: true })).status).toBe(410);
  }, 60_000);
  afterAll(() => app?.close());

  it("prints the user's events in log order as a table: time, event, request, outcome", async () => {
    const d = deps();
    expect(await history(d, alice.name)).toBe(0);
    const rows = d.stdout.text
      .split('\n')
      .filter((line) => /^│ \d{4}-/.test(line))
      .map((line) =>
        line
          .split('│')
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
    expect(rows.map(([time]) => time)).toEqual(rows.map(() => expect.stringMatching(ISO_MS)));
    expect(rows.map(([, event, request, outcome]) => [event, request, outcome])).toEqual([
      [
        'SubscriptionsAddRequested',
        expect.stringMatching(
          /^POST 2 items: https:\/\/a\.example\.com\/.*…, https:\/\/b\.example\.com\/.*…$/,
        ),
        'subscribed 2, failed 0',
      ],
      [
        'SubscriptionsAddRequested',
        expect.stringMatching(/^POST 1 item: https:\/\/c\.example/),
        'subscribed 1, failed 0',
      ],
      ['SubscriptionUpdateRequested', `PATCH ${a} is_subscribed=false`, 'updated is_subscribed=false'],
      ['SubscriptionUpdateRequested', `PATCH ${a} new_guid=${a2}`, `updated guid=${a2}`],
      ['SubscriptionUpdateRequested', `PATCH ${b} new_guid=${a2}`, `updated guid=${a2}`],
      [
        'SubscriptionUpdateRequested',
        expect.stringMatching(/^PATCH [0-9a-f-]{36} is_subscribed=true$/),
        '404',
      ],
      ['DeletionRequested', `DELETE ${a}`, `deletion #${deletionId} accepted`],
      [
        'DeletionCompleted',
        expect.stringMatching(new RegExp(`^DeletionCompleted #${deletionId} at \\d{4}-`)),
        'recorded',
      ],
      ['SubscriptionUpdateRequested', `PATCH ${a2} is_subscribed=true`, '410'],
    ]);
    const times = rows.map(([time]) => Date.parse(time!));
    expect([...times].sort((x, y) => x - y)).toEqual(times);
  });

  it('prints one JSON array with the events, their positions and outcomes', async () => {
    const entries = await json(alice.name);
    expect(entries).toHaveLength(9);
    expect(entries[0]).toEqual({
      time: expect.stringMatching(ISO_MS),
      partition: expect.any(Number),
      offset: expect.any(Number),
      type: 'SubscriptionsAddRequested',
      requestId: expect.any(String),
      request: expect.stringMatching(/^POST 2 items/),
      result: 'subscribed 2, failed 0',
      event: expect.objectContaining({ type: 'SubscriptionsAddRequested', userId: alice.id }),
      outcome: expect.objectContaining({ kind: 'Added', failure: [] }),
      instant: expect.stringMatching(ISO_MS),
    });
    const offsets = entries.map((entry) => entry.offset);
    expect([...offsets].sort((x, y) => x - y)).toEqual(offsets);
    expect(new Set(entries.map((entry) => entry.partition)).size).toBe(1);
  });

  it('with --guid, keeps the events of that subscription: any guid of its chain, merged ones, its deletion', async () => {
    const byNewGuid = await json(alice.name, a2);
    expect(byNewGuid.map((entry) => entry.request.replace(/:.*$/, '').replace(/ at .*$/, ''))).toEqual([
      'POST 2 items',
      `PATCH ${a} is_subscribed=false`,
      `PATCH ${a} new_guid=${a2}`,
      `PATCH ${b} new_guid=${a2}`,
      `DELETE ${a}`,
      `DeletionCompleted #${deletionId}`,
      `PATCH ${a2} is_subscribed=true`,
    ]);
    expect(await json(alice.name, a.toUpperCase())).toEqual(byNewGuid);

    const onlyC = await json(alice.name, c);
    expect(onlyC.map((entry) => entry.request)).toEqual([
      expect.stringMatching(/^POST 1 item: https:\/\/c\./),
    ]);
  });

  it('with --guid, keeps a gpodder.net upload removing the URL the subscription holds, though another took it later', async () => {
    const carol = await app.freshUser();
    const [holder, mover] = [guid(), guid()];
    const [shared, moved] = [feed('shared'), feed('moved')];
    const as = app.as(carol);
    for (const [url, id] of [
      [shared, holder],
      [moved, mover],
    ])
      expect(
        (await as.post('/v1/subscriptions', { subscriptions: [{ feed_url: url, guid: id }] })).status,
      ).toBe(200);
    expect((await as.patch(`/v1/subscriptions/${mover}`, { new_feed_url: shared })).status).toBe(200);
    const basic = `Basic ${Buffer.from(`${carol.name}:${carol.password}`).toString('base64')}`;
    const upload = await app.anonymous
      .withAuthorization(basic)
      .post(`/api/2/subscriptions/${carol.name}/phone.json`, { add: [], remove: [shared] });
    expect(upload.status).toBe(200);
    expect((await as.get(`/v1/subscriptions/${holder}`)).body.is_subscribed).toBe(false);

    for (const id of [holder, mover])
      expect((await json(carol.name, id)).map((entry) => entry.type)).toEqual(
        expect.arrayContaining(['GpodderUploadRequested']),
      );
  });

  it('shows a sync request as its actions and each result, and keeps it for the subscriptions it names', async () => {
    const dave = await app.freshUser();
    const [mine, other, client] = [guid(), guid(), guid()];
    const added = await app.as(dave).post('/v1/subscriptions', {
      subscriptions: [
        { feed_url: feed('mine'), guid: mine },
        { feed_url: feed('other'), guid: other },
      ],
    });
    expect(added.status).toBe(200);
    const synced = feed('synced');
    const unsubscribe = syncAction('unsubscribe', soon(), { sync_id: syncIdOfUser(dave, mine) });
    const unknown = guid();
    await syncThroughLog(
      app,
      dave,
      [
        syncAction('subscribe', soon(), { feed_url: synced }),
        unsubscribe,
        syncAction('unsubscribe', soon(), { sync_id: unknown }),
        'not an action',
      ],
      client,
    );
    // A retry names the subscription by its action_id alone.
    await syncThroughLog(app, dave, [{ ...unsubscribe, data: {} }], client);
    const entries = await json(dave.name);
    expect(entries.slice(1).map(({ type, request, result }) => ({ type, request, result }))).toEqual([
      {
        type: 'SyncActionsPosted',
        request:
          `sync: 4 actions from client ${client}: subscription/subscribe ${synced.slice(0, 39)}…, ` +
          `subscription/unsubscribe ${syncIdOfUser(dave, mine)}, subscription/unsubscribe ${unknown}, +1 more`,
        result: 'applied, applied, rejected (Entity not found), rejected (Action must be an object)',
      },
      {
        type: 'SyncActionsPosted',
        request: `sync: 1 action from client ${client}: subscription/unsubscribe`,
        result: 'rejected (action_id was sent before with another action)',
      },
    ]);
    expect((await json(dave.name, mine)).map((entry) => entry.type)).toEqual([
      'SubscriptionsAddRequested',
      'SyncActionsPosted',
      'SyncActionsPosted',
    ]);
    expect((await json(dave.name, other)).map((entry) => entry.type)).toEqual(['SubscriptionsAddRequested']);
  });

  it("shows the resolver's feed move, and names feeds by the catalog's titles", async () => {
    const erin = await app.freshUser();
    const [subscription, old, home] = [guid(), feed('old-home'), feed('new-home')];
    expect(
      (
        await app
          .as(erin)
          .post('/v1/subscriptions', { subscriptions: [{ feed_url: old, guid: subscription }] })
      ).status,
    ).toBe(200);
    const moved: LogEvent = {
      type: 'FeedMoved',
      userId: erin.id,
      feedUrl: normalizeFeedUrl(old),
      newFeedUrl: home,
      cause: 'permanent-redirect',
      guids: [subscription],
    };
    await app.runtime.eventLog.append([envelopeOf(moved, 'feed-moved-test')]);
    await app.untilProjectionAtEnd();
    await app.runtime.database.dataSource.query(
      `INSERT INTO castlog_feeds.feeds (url, next_fetch_at, first_seen, title) VALUES ($1, now(), now(), 'New Home Radio')`,
      [normalizeFeedUrl(home)],
    );
    const entries = await json(erin.name, subscription);
    expect(entries.map(({ type, request, result }) => ({ type, request, result }))[1]).toEqual({
      type: 'FeedMoved',
      request: `feed moved (a permanent redirect): ${normalizeFeedUrl(old).slice(0, 39)}… -> ${home.slice(0, 39)}…`,
      result: `moved ${subscription}`,
    });
    expect(entries[1]?.titles).toEqual({ [normalizeFeedUrl(home)]: 'New Home Radio' });
    const d = deps();
    expect(await history(d, erin.name)).toBe(0);
    expect(d.stdout.text).toContain(
      `feeds named above, by their titles:\n  ${normalizeFeedUrl(home)}  New Home Radio\n`,
    );
  });

  it('with a guid the read model does not know, keeps the events naming it and says so', async () => {
    const unknown = guid();
    const d = deps();
    expect(await history(d, alice.name, { guid: unknown })).toBe(0);
    expect(d.stderr.text).toBe(
      `guid ${unknown} is not in the read model: showing the events that name it\nno events for ${alice.name} and guid ${unknown}\n`,
    );
    expect(d.stdout.text).toBe('');
  });

  it('finds the user by id too, and answers 1 with one line for an unknown user or a bad guid', async () => {
    expect(await json(alice.id)).toEqual(await json(alice.name));
    const nobody = deps();
    expect(await history(nobody, 'nobody-at-all')).toBe(1);
    expect(nobody.stderr.text).toBe('castlog: no user nobody-at-all\n');
    const bad = deps();
    expect(await history(bad, alice.name, { guid: 'not-a-guid' })).toBe(1);
    expect(bad.stderr.text).toBe('castlog: --guid must be a UUID, not not-a-guid\n');
  });

  it("writes control characters a client sent as escapes, never to the operator's terminal", async () => {
    const mallory = await app.freshUser();
    const sent = '\u001b]0;PWNED\u0007\u001b[2J\u009b31m\u202eevil\r\nfake line';
    const answer = await app.as(mallory).post('/v1/subscriptions', { subscriptions: [{ feed_url: sent }] });
    expect(answer.body.failure).toHaveLength(1);
    const table = deps();
    expect(await history(table, mallory.name)).toBe(0);
    const listed = deps();
    expect(await history(listed, mallory.name, { json: true })).toBe(0);
    for (const output of [table.stdout.text, listed.stdout.text]) {
      // eslint-disable-next-line no-control-regex -- what must not be printed
      expect(output).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    }
    expect(table.stdout.text).toContain('\\u001b]0;PWNED\\u0007');
    const [entry] = JSON.parse(listed.stdout.text) as HistoryEntry[];
    expect(entry?.event).toMatchObject({ items: [{ feedUrl: sent }] });
  });

  it('sums a simple-API PUT up as the set it makes, and keeps it for a known guid only', async () => {
    const heidi = await app.freshUser();
    const kept = feed('kept');
    const put = await app.as(heidi).request('PUT', `/subscriptions/${heidi.name}/laptop.txt`, {
      rawBody: `${kept}\n`,
      headers: { 'content-type': 'text/plain' },
    });
    expect(put.status).toBe(200);
    const [entry] = await json(heidi.name);
    expect(entry?.request).toBe(`gpodder PUT from laptop: the set becomes 1 [${kept.slice(0, 39)}…]`);
    const added = await app.as(heidi).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed() }] });
    const known = (await json(heidi.name, added.body.success[0].guid)).map((e) => e.type);
    expect(known).toEqual(['GpodderUploadRequested', 'SubscriptionsAddRequested']);
    expect(await json(heidi.name, guid())).toEqual([]);
  });

  it("shows a removed user's history by its id", async () => {
    const ivan = await app.freshUser();
    await app.as(ivan).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed() }] });
    const before = await json(ivan.id);
    expect(before).toHaveLength(1);
    await app.runtime.database.dataSource.query(`DELETE FROM castlog_auth.users WHERE id = $1`, [ivan.id]);
    expect(await json(ivan.id)).toEqual(before);
    const byName = deps();
    expect(await history(byName, ivan.name)).toBe(1);
    expect(byName.stderr.text).toBe(`castlog: no user ${ivan.name}\n`);
  });

  it('shows a user with no events as an empty history', async () => {
    const carol = await app.freshUser();
    expect(await json(carol.name)).toEqual([]);
    const d = deps();
    expect(await history(d, carol.name)).toBe(0);
    expect(d.stderr.text).toBe(`no events for ${carol.name}\n`);
  });
});
