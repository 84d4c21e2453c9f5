import { ApiResponse } from '../support/api-client';
import { GPODDER_INVALID as INVALID, errorBody, feed } from '../support/contract';
import { sendThenRead } from '../support/send-then-read';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

const GPODDER_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
/** The second of a Unix timestamp as gpodder.net writes an action's time. */
const gpodderTime = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().slice(0, 19);

interface Actions {
  actions: Record<string, unknown>[];
  timestamp: number;
}

describe('gpodder.net episode actions: /api/2/episodes/{user}.json', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  let podcast: string;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres' })));
  afterAll(() => app?.close());
  beforeEach(async () => {
    alice = await app.freshUser();
    podcast = feed('show');
  });

  const path = (user: TestUser = alice) => `/api/2/episodes/${user.name}.json`;
  const upload = (actions: unknown) => app.as(alice).post(path(), actions);
  const uploadRaw = (rawBody: string, headers: Record<string, string> = {}) =>
    app.as(alice).request('POST', path(), { rawBody, headers });
  const download = (query = '') => app.as(alice).get<Actions>(`${path()}${query}`);
  const episode = (n: number) => `${podcast.replace('/rss', '')}/episode-${n}.mp3`;
  const expect400 = (response: ApiResponse, detail?: string | RegExp) => {
    expect(response.status).toBe(400);
    expect(response.body).toEqual(INVALID(detail));
  };

  describe('POST: upload', () => {
    it('records the actions and answers an integer timestamp and no update_urls', async () => {
      const response = await upload([
        {
          podcast,
          episode: episode(1),
          action: 'play',
          timestamp: '2023-02-23T14:00:00',
          started: 0,
          position: 120,
          total: 3600,
          device: 'phone',
          guid: 'episode-1-guid',
        },
        { podcast, episode: episode(2), action: 'download', timestamp: '2023-02-23T13:00:00' },
      ]);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body).toEqual({ timestamp: expect.any(Number), update_urls: [] });
      expect(Number.isInteger(response.body.timestamp)).toBe(true);
      // read your writes, each action with the fields it has, in the order received
      expect((await download()).body).toEqual({
        actions: [
          {
            podcast,
            episode: episode(1),
            action: 'play',
            timestamp: '2023-02-23T14:00:00',
            started: 0,
            position: 120,
            total: 3600,
            device: 'phone',
            guid: 'episode-1-guid',
          },
          { podcast, episode: episode(2), action: 'download', timestamp: '2023-02-23T13:00:00' },
        ],
        timestamp: response.body.timestamp,
      });
    });

    it('gives an action without a timestamp the second it was received', async () => {
      const response = await upload([{ podcast, episode: episode(1), action: 'new' }]);
      expect((await download()).body.actions).toEqual([
        { podcast, episode: episode(1), action: 'new', timestamp: gpodderTime(response.body.timestamp) },
      ]);
    });

    it('keeps a timestamp with a zone, an offset or a fraction in UTC, to the second', async () => {
      await upload([
        { podcast, episode: episode(1), action: 'new', timestamp: '2023-02-23T14:00:00Z' },
        { podcast, episode: episode(2), action: 'new', timestamp: '2023-02-23T16:30:00.789+02:00' },
        { podcast, episode: episode(3), action: 'new', timestamp: '2023-02-23T14:00:59.999' },
        { podcast, episode: episode(4), action: 'new', timestamp: '2023-02-23T23:30:00-01:00' },
      ]);
      expect((await download()).body.actions.map((action) => action.timestamp)).toEqual([
        '2023-02-23T14:00:00',
        '2023-02-23T14:30:00',
        '2023-02-23T14:00:59',
        '2023-02-24T00:30:00',
      ]);
    });

    it('reads the action in any case and keeps it lower-case', async () => {
      await upload([
        { podcast, episode: episode(1), action: 'PLAY', position: 5 },
        { podcast, episode: episode(2), action: 'Download' },
        { podcast, episode: episode(3), action: 'DeLeTe' },
      ]);
      expect((await download()).body.actions.map((action) => action.action)).toEqual([
        'play',
        'download',
        'delete',
      ]);
    });

    it('records flattr, as gpodder.net lists it, and answers it as uploaded', async () => {
      const flattr = { podcast, episode: episode(1), action: 'flattr', timestamp: '2023-02-23T14:00:00' };
      const response = await upload([
        { podcast, episode: episode(2), action: 'play', position: 60 },
        { ...flattr, device: 'phone', guid: 'episode-1-guid', position: 5 },
        { podcast, episode: episode(3), action: 'Flattr', timestamp: '2023-02-23T15:00:00' },
      ]);
      expect(response.status).toBe(200);
      const { actions } = (await download()).body;
      expect(actions.slice(1)).toEqual([
        { ...flattr, device: 'phone', guid: 'episode-1-guid' },
        { podcast, episode: episode(3), action: 'flattr', timestamp: '2023-02-23T15:00:00' },
      ]);
      expect(
        (await download(`?aggregated=true&podcast=${encodeURIComponent(podcast)}`)).body.actions,
      ).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'flattr', episode: episode(1) })]));
    });

    it('trims the white space around a podcast URL, and reports [sent, trimmed] in update_urls', async () => {
      const spaced = [` ${podcast}`, `${podcast}\n`];
      const response = await upload([
        { podcast: spaced[0], episode: episode(1), action: 'new', timestamp: '2023-02-23T14:00:00' },
        { podcast: spaced[0], episode: episode(2), action: 'new', timestamp: '2023-02-23T14:00:00' },
        { podcast: spaced[1], episode: episode(3), action: 'new', timestamp: '2023-02-23T14:00:00' },
        { podcast, episode: ` ${episode(4)}`, action: 'new', timestamp: '2023-02-23T14:00:00' },
      ]);
      expect(response.status).toBe(200);
      expect(response.body.update_urls).toEqual([
        [spaced[0], podcast],
        [spaced[1], podcast],
      ]);
      const { actions } = (await download(`?podcast=${encodeURIComponent(podcast)}`)).body;
      expect(actions.map((action) => [action.podcast, action.episode])).toEqual([
        [podcast, episode(1)],
        [podcast, episode(2)],
        [podcast, episode(3)],
        // only the feed URL is trimmed: the episode is kept as sent
        [podcast, ` ${episode(4)}`],
      ]);
      expect400(
        await upload([{ podcast: ' \t ', episode: episode(1), action: 'new' }]),
        'actions[0].podcast must be a non-empty string',
      );
    });

    it('drops started, position and total from an action other than play (they mean nothing there)', async () => {
      await upload([
        { podcast, episode: episode(1), action: 'download', started: 1, position: 2, total: 3 },
        { podcast, episode: episode(2), action: 'delete', position: 'not even a number' },
        { podcast, episode: episode(3), action: 'play', position: 2 },
      ]);
      const actions = (await download()).body.actions;
      expect(actions.map((action) => Object.keys(action).sort())).toEqual([
        ['action', 'episode', 'podcast', 'timestamp'],
        ['action', 'episode', 'podcast', 'timestamp'],
        ['action', 'episode', 'podcast', 'position', 'timestamp'],
      ]);
    });

    it('creates a device an action names, by that first use', async () => {
      await app
        .as(alice)
        .post(`/api/2/devices/${alice.name}/phone.json`, { caption: 'Phone', type: 'mobile' });
      await upload([
        { podcast, episode: episode(1), action: 'new', device: 'phone' },
        { podcast, episode: episode(2), action: 'new', device: 'kasts-host' },
      ]);
      expect((await app.as(alice).get(`/api/2/devices/${alice.name}.json`)).body).toEqual([
        { id: 'kasts-host', caption: '', type: 'other', subscriptions: 0 },
        { id: 'phone', caption: 'Phone', type: 'mobile', subscriptions: 0 },
      ]);
    });

    it('reads the body as JSON whatever the Content-Type says', async () => {
      const body = JSON.stringify([{ podcast, episode: episode(1), action: 'new' }]);
      for (const type of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'application/json; charset=utf-8',
      ])
        expect((await uploadRaw(body, { 'content-type': type })).status).toBe(200);
      expect((await download()).body.actions).toHaveLength(3);
    });

    it('answers an empty list with the clock as it was, recording nothing', async () => {
      const first = await upload([{ podcast, episode: episode(1), action: 'new' }]);
      const empty = await upload([]);
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ timestamp: first.body.timestamp, update_urls: [] });
      expect((await download()).body.actions).toHaveLength(1);
    });

    it('refuses a body that is not a list of valid actions with 400, recording none of it', async () => {
      const ok = { podcast, episode: episode(1), action: 'play' };
      const cases: [unknown, string | RegExp][] = [
        [{ actions: [ok] }, 'the body must be a JSON list of episode actions'],
        [[ok, 'play'], 'actions[1] must be an object'],
        [[{ ...ok, podcast: '' }], 'actions[0].podcast must be a non-empty string'],
        [[{ ...ok, podcast: 42 }], 'actions[0].podcast must be a non-empty string'],
        [[{ podcast, action: 'new' }], 'actions[0].episode must be a non-empty string'],
        [
          [{ ...ok, action: 'stream' }],
          'actions[0].action must be one of download, play, delete, new, flattr',
        ],
        [[{ ...ok, action: 'like' }], 'actions[0].action must be one of download, play, delete, new, flattr'],
        [[{ ...ok, action: null }], 'actions[0].action must be one of download, play, delete, new, flattr'],
        [[{ ...ok, timestamp: 'yesterday' }], 'actions[0].timestamp must be an RFC 3339 date-time'],
        [[{ ...ok, timestamp: '2024-13-01T10:00:00' }], 'actions[0].timestamp must be an RFC 3339 date-time'],
        [[{ ...ok, timestamp: '2024-01-01' }], 'actions[0].timestamp must be an RFC 3339 date-time'],
        [[{ ...ok, timestamp: 1_700_000_000 }], 'actions[0].timestamp must be an RFC 3339 date-time'],
        [[{ ...ok, device: 'bad device' }], 'actions[0].device must be 1 to 64 of A-Z a-z 0-9 . _ -'],
        [[{ ...ok, device: '' }], 'actions[0].device must be 1 to 64 of A-Z a-z 0-9 . _ -'],
        [[{ ...ok, guid: 42 }], 'actions[0].guid must be a string'],
        [[{ ...ok, episode: 'e\u0000' }], /U\+0000/],
      ];
      for (const field of ['started', 'position', 'total'])
        for (const value of [-1, 1.5, '12', null, 2 ** 31])
          cases.push([
            [{ ...ok, [field]: value }],
            `actions[0].${field} must be an integer from 0 to 2147483647 (seconds)`,
          ]);
      for (const [body, detail] of cases) expect400(await upload(body), detail);
      expect400(await uploadRaw('[{"podcast": '), 'the body is not JSON');
      expect400(await uploadRaw(''), 'the body is not JSON');
      const tooMany = Array.from({ length: 10_001 }, (_, i) => ({
        podcast: 'p',
        episode: `e${i}`,
        action: 'new',
      }));
      expect400(await upload(tooMany), 'the body must hold at most 10000 episode actions');
      expect((await download()).body.actions).toEqual([]);
    });

    it('records 10,000 actions as mygpoclient uploads them (about 2.2 MB, more than the 1 MiB of other routes)', async () => {
      // mygpoclient's upload_episode_actions: every field of a play action, written by Python's
      // json.dumps (", " and ": " between items), labelled as a form, sent whole before it reads.
      const actions = Array.from({ length: 10_000 }, (_, i) => ({
        podcast,
        episode: `${episode(i)}?title=an-episode-title-of-a-usual-length`,
        action: 'play',
        device: 'laptop',
        timestamp: gpodderTime(1_764_000_000 + i),
        started: 0,
        position: 60 + (i % 3000),
        total: 3600,
      }));
      const body = JSON.stringify(actions).replaceAll('":', '": ').replaceAll(',"', ', "');
      expect(body.length).toBeGreaterThan(2_100_000);
      const basic = `Basic ${Buffer.from(`${alice.name}:${alice.password}`).toString('base64')}`;
      const answer = await sendThenRead(app.url, {
        method: 'POST',
        path: path(),
        body,
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect({ status: answer.status, body: JSON.parse(answer.body) }).toEqual({
        status: 200,
        body: { timestamp: expect.any(Number), update_urls: [] },
      });
      const recorded = (await download()).body.actions;
      expect(recorded).toHaveLength(10_000);
      expect(recorded[9_999]).toEqual(actions[9_999]);
    });

    it("answers 401 for another user's path and records nothing of theirs", async () => {
      const bob = await app.freshUser();
      const response = await app.as(alice).post(path(bob), [{ podcast, episode: episode(1), action: 'new' }]);
      expect(response.status).toBe(401);
      expect(response.body).toEqual(errorBody(401, 'User not authorized'));
      expect((await app.as(bob).get<Actions>(path(bob))).body.actions).toEqual([]);
    });
  });

  describe('GET: download', () => {
    it('answers no actions and the timestamp 0 for a user without any change', async () => {
      const response = await download();
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ actions: [], timestamp: 0 });
    });

    it('since is inclusive and compares the second received: a client sending back the timestamp misses nothing', async () => {
      const first = await upload([{ podcast, episode: episode(1), action: 'download' }]);
      let attempts = 0;
      for (;;) {
        attempts += 1;
        const synced = await download(`?since=${first.body.timestamp}`);
        const later = await upload([{ podcast, episode: episode(2), action: 'play', position: 10 }]);
        const next = await download(`?since=${synced.body.timestamp}`);
        // every action received since the second of the last timestamp, that one included
        expect(next.body.actions.map((action) => action.episode)).toContain(episode(2));
        expect(next.body.timestamp).toBe(later.body.timestamp);
        if (later.body.timestamp === synced.body.timestamp) break; // shown within one second
        expect(attempts).toBeLessThan(20);
      }
      // an action's own timestamp does not count: only when it was received
      await upload([{ podcast, episode: episode(3), action: 'new', timestamp: '2001-01-01T00:00:00' }]);
      const latest = await download(`?since=${first.body.timestamp}`);
      expect(latest.body.actions.map((action) => action.episode)).toContain(episode(3));
    });

    it('leaves out actions received before since', async () => {
      const old = await upload([{ podcast, episode: episode(1), action: 'new' }]);
      const response = await download(`?since=${old.body.timestamp + 1}`);
      expect(response.body.actions).toEqual([]);
      expect(response.body.timestamp).toBe(old.body.timestamp);
    });

    it('filters by podcast and by device', async () => {
      const other = feed('other-show');
      await upload([
        { podcast, episode: episode(1), action: 'new', device: 'phone' },
        { podcast: other, episode: `${other}#1`, action: 'new', device: 'laptop' },
        { podcast, episode: episode(2), action: 'new' },
      ]);
      const byPodcast = await download(`?podcast=${encodeURIComponent(podcast)}`);
      expect(byPodcast.body.actions.map((action) => action.episode)).toEqual([episode(1), episode(2)]);
      const byDevice = await download('?device=laptop');
      expect(byDevice.body.actions.map((action) => action.episode)).toEqual([`${other}#1`]);
      const unknownDevice = await download('?device=never-used');
      expect(unknownDevice.status).toBe(200);
      expect(unknownDevice.body.actions).toEqual([]);
      // a filter is not a use: no device is created
      expect(
        (await app.as(alice).get(`/api/2/devices/${alice.name}.json`)).body.map((d: { id: string }) => d.id),
      ).toEqual(['laptop', 'phone']);
    });

    it('aggregated=true keeps the latest action of each episode (by its timestamp)', async () => {
      await upload([
        { podcast, episode: episode(1), action: 'download', timestamp: '2023-02-23T10:00:00' },
        { podcast, episode: episode(1), action: 'play', timestamp: '2023-02-23T12:00:00', position: 60 },
        { podcast, episode: episode(2), action: 'play', timestamp: '2023-02-23T11:00:00', position: 5 },
        { podcast, episode: episode(1), action: 'new', timestamp: '2023-02-23T09:00:00' },
      ]);
      await upload([{ podcast, episode: episode(2), action: 'delete', timestamp: '2023-02-23T11:30:00' }]);
      for (const aggregated of ['true', '1', 'TRUE']) {
        const response = await download(`?aggregated=${aggregated}`);
        expect(
          response.body.actions.map((action) => [action.episode, action.action, action.timestamp]),
        ).toEqual(
          expect.arrayContaining([
            [episode(1), 'play', '2023-02-23T12:00:00'],
            [episode(2), 'delete', '2023-02-23T11:30:00'],
          ]),
        );
        expect(response.body.actions).toHaveLength(2);
      }
      expect((await download('?aggregated=false')).body.actions).toHaveLength(5);
    });

    it('refuses a bad since, aggregated, device or podcast with 400', async () => {
      for (const since of ['-1', '1.5', 'abc', ''])
        expect400(await download(`?since=${since}`), 'since must be a non-negative integer (Unix seconds)');
      expect400(await download('?aggregated=maybe'), 'aggregated must be true or false');
      expect400(await download('?device=bad%20device'), 'device must be 1 to 64 of A-Z a-z 0-9 . _ -');
      expect400(await download('?podcast=%00'), 'podcast must not hold U+0000 or unpaired surrogates');
    });

    it("answers 401 for another user's path", async () => {
      const bob = await app.freshUser();
      const response = await app.as(alice).get(path(bob));
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
    });

    it('writes every timestamp as YYYY-MM-DDTHH:MM:SS', async () => {
      await upload([
        { podcast, episode: episode(1), action: 'new' },
        { podcast, episode: episode(2), action: 'new', timestamp: '2023-02-23T14:00:00.123456Z' },
      ]);
      for (const action of (await download()).body.actions) expect(action.timestamp).toMatch(GPODDER_TIME);
    });
  });
});
