import { randomUUID } from 'node:crypto';
import { parseOpml } from '@castlog/opml';
import { ApiResponse } from '../support/api-client';
import { GPODDER_INVALID as INVALID, errorBody, feed } from '../support/contract';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

const sorted = (list: readonly string[]) => [...list].sort();
const xmlEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
const opmlOf = (urls: readonly string[]) =>
  `<?xml version="1.0" encoding="utf-8"?>\n<opml version="2.0"><head><title>export</title></head><body>` +
  urls.map((url) => `<outline type="rss" text="feed" xmlUrl="${xmlEscape(url)}"/>`).join('') +
  '</body></opml>';

/** The simple API of one app, for one user. OPML and text answers are read with fetch: the test
 * client checks JSON answers against /openapi.json, and these are not JSON. */
function simpleApi(app: CastlogUnderTest, user: TestUser) {
  const auth = { authorization: `Bearer ${user.token}` };
  const devicePath = (device: string, format: string) => `/subscriptions/${user.name}/${device}.${format}`;
  return {
    devicePath,
    json: (device?: string) =>
      app
        .as(user)
        .get<string[]>(
          device === undefined ? `/subscriptions/${user.name}.json` : devicePath(device, 'json'),
        ),
    async text(format: string, device?: string, query = '') {
      const path =
        device === undefined ? `/subscriptions/${user.name}.${format}` : devicePath(device, format);
      const response = await fetch(new URL(`${path}${query}`, app.url), { headers: auth });
      return {
        status: response.status,
        type: response.headers.get('content-type'),
        nosniff: response.headers.get('x-content-type-options'),
        text: await response.text(),
      };
    },
    put: (format: string, rawBody: string | Uint8Array, contentType: string, device = 'phone') =>
      app
        .as(user)
        .request('PUT', devicePath(device, format), { rawBody, headers: { 'content-type': contentType } }),
  };
}

describe('gpodder.net simple API: /subscriptions/{user}[/{device}].{json|opml|txt}', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  let simple: ReturnType<typeof simpleApi>;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres' })));
  afterAll(() => app?.close());
  beforeEach(async () => {
    alice = await app.freshUser();
    simple = simpleApi(app, alice);
  });

  const subscribe = (urls: string[]) =>
    app.as(alice).post(`/api/2/subscriptions/${alice.name}/laptop.json`, { add: urls, remove: [] });
  const expect400 = (response: ApiResponse, detail?: string | RegExp) => {
    expect(response.status).toBe(400);
    expect(response.body).toEqual(INVALID(detail));
  };

  describe('GET', () => {
    it('answers the subscribed feeds as a JSON list of strings, for a device and for the user', async () => {
      const [a, b, c] = [feed('a'), feed('b'), feed('c')];
      await subscribe([a, b, c]);
      await app.as(alice).post(`/api/2/subscriptions/${alice.name}/laptop.json`, { add: [], remove: [b] });
      for (const response of [await simple.json('phone'), await simple.json()]) {
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toMatch(/^application\/json/);
        expect(sorted(response.body)).toEqual(sorted([a, c]));
      }
    });

    it('answers them as an OPML 2.0 document (text/x-opml) with one outline per feed', async () => {
      const [a, b] = [feed('a'), `${feed('b')}?x=1&y=<2>`];
      await subscribe([a, b]);
      for (const response of [await simple.text('opml', 'phone'), await simple.text('opml')]) {
        expect(response.status).toBe(200);
        expect(response.type).toMatch(/^text\/x-opml/);
        expect(response.text).toMatch(/<opml version="2.0"/);
        expect(sorted(parseOpml(response.text).feeds.map((f) => f.url))).toEqual(sorted([a, b]));
      }
    });

    it('answers them as text/plain, one URL per line', async () => {
      expect(await simple.text('txt')).toEqual({
        status: 200,
        type: expect.stringMatching(/^text\/plain/),
        nosniff: null,
        text: '',
      });
      const [a, b] = [feed('a'), feed('b')];
      await subscribe([a, b]);
      const response = await simple.text('txt', 'phone');
      expect(response.type).toMatch(/^text\/plain/);
      expect(response.text.endsWith('\n')).toBe(true);
      expect(sorted(response.text.split('\n').filter((line) => line !== ''))).toEqual(sorted([a, b]));
    });

    it('answers jsonp: the JSON list passed to the callback, as a script nobody may sniff', async () => {
      const [a, b] = [feed('a'), `${feed('b')}?x=1&y=2`];
      await subscribe([a, b]);
      for (const device of ['phone', undefined]) {
        const response = await simple.text('jsonp', device, '?jsonp=jQuery_1.cb$');
        expect(response).toEqual({
          status: 200,
          type: 'application/javascript; charset=utf-8',
          nosniff: 'nosniff',
          text: expect.stringMatching(/^jQuery_1\.cb\$\(.*\)$/),
        });
        const list = JSON.parse(response.text.slice('jQuery_1.cb$('.length, -1));
        expect(sorted(list)).toEqual(sorted([a, b]));
      }
      expect((await simple.text('jsonp', undefined, '?jsonp=cb')).text).toMatch(/^cb\(\[/);
    });

    it('refuses a jsonp callback that is missing or not an identifier with 400, script in it or not', async () => {
      await subscribe([feed('a')]);
      const hostile = [
        '',
        '?jsonp=',
        '?other=cb',
        `?jsonp=${encodeURIComponent('alert(1)//')}`,
        `?jsonp=${encodeURIComponent('<script>')}`,
        `?jsonp=${encodeURIComponent('</script><script>alert(1)</script>')}`,
        `?jsonp=${'a'.repeat(200)}`,
        `?jsonp=${'a'.repeat(65)}`,
        '?jsonp=1cb',
        '?jsonp=cb%0A',
        '?jsonp=cb;alert(1)',
        '?jsonp=a&jsonp=b',
        `?jsonp=${encodeURIComponent('cb ')}`,
        '?jsonp=%E2%80%A8',
      ];
      for (const query of hostile)
        for (const device of ['phone', undefined]) {
          const response = await simple.text('jsonp', device, query);
          expect([query, response.status, response.type]).toEqual([
            query,
            400,
            'application/json; charset=utf-8',
          ]);
          expect(JSON.parse(response.text)).toEqual(
            INVALID(/: jsonp must (name the callback: |be given once$)/),
          );
          expect(response.text).not.toMatch(/alert|script/);
        }
      // 64 characters is the most a callback has
      expect((await simple.text('jsonp', 'phone', `?jsonp=${'a'.repeat(64)}`)).status).toBe(200);
    });

    it("answers the user's list as gpodder.net's podcast XML, titled by the URL until castlog knows the feed", async () => {
      expect(await simple.text('xml')).toEqual({
        status: 200,
        type: 'application/xml; charset=utf-8',
        nosniff: null,
        text: '<?xml version="1.0" encoding="UTF-8"?>\n<podcasts/>\n',
      });
      const [a, b] = [feed('a'), `${feed('b')}?x=1&y=2`];
      await subscribe([a, b]);
      const { text } = await simple.text('xml');
      const podcasts = [
        ...text.matchAll(/<podcast>\s*<title>(.*)<\/title>\s*<url>(.*)<\/url>\s*<\/podcast>/g),
      ].map(([, title, url]) => `${title} ${url}`);
      const escaped = b.replace(/&/g, '&amp;');
      expect(sorted(podcasts)).toEqual(sorted([`${a} ${a}`, `${escaped} ${escaped}`]));
      expect(text).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<podcasts>\n/);
    });

    it('answers 400 "Invalid format" for a format it does not have, a device\'s xml among them', async () => {
      for (const [path, detail] of [
        [
          `/subscriptions/${alice.name}/phone.xml`,
          `Invalid format "xml": a device's list is json, jsonp, opml or txt`,
        ],
        [
          `/subscriptions/${alice.name}/my.phone.yaml`,
          `Invalid format "yaml": a device's list is json, jsonp, opml or txt`,
        ],
        [
          `/subscriptions/${alice.name}.html`,
          `Invalid format "html": the user's list is json, jsonp, opml, txt or xml`,
        ],
        [
          `/subscriptions/${alice.name}.JSON`,
          `Invalid format "JSON": the user's list is json, jsonp, opml, txt or xml`,
        ],
      ]) {
        const response = await fetch(new URL(path!, app.url), {
          headers: { authorization: `Bearer ${alice.token}` },
        });
        expect([path, response.status]).toEqual([path, 400]);
        expect(await response.json()).toEqual(INVALID(detail));
      }
      // the credentials first: 401 for another user's path whatever its format
      const bob = await app.freshUser();
      const other = await fetch(new URL(`/subscriptions/${bob.name}/phone.yaml`, app.url), {
        headers: { authorization: `Bearer ${alice.token}` },
      });
      expect(other.status).toBe(401);
      // a path without a format, or with an empty one, is no list at all
      for (const path of [`/subscriptions/${alice.name}/phone`, `/subscriptions/${alice.name}/phone.`]) {
        const none = await fetch(new URL(path, app.url), {
          headers: { authorization: `Bearer ${alice.token}` },
        });
        expect([path, none.status]).toEqual([path, 404]);
        expect(await none.json()).toEqual(errorBody(404, 'Resource not found'));
      }
    });

    it('refuses a device id outside the pattern with 400', async () => {
      expect400(await simple.json('bad%20device'), 'the device id must be 1 to 64 of A-Z a-z 0-9 . _ -');
    });

    it("answers 401 for another user's path, with the Basic challenge", async () => {
      const bob = await app.freshUser();
      for (const path of [`/subscriptions/${bob.name}.json`, `/subscriptions/${bob.name}/phone.json`]) {
        const response = await app.as(alice).get(path);
        expect(response.status).toBe(401);
        expect(response.body).toEqual(errorBody(401, 'User not authorized'));
        expect(response.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
      }
    });
  });

  describe('PUT: replace the subscribed set', () => {
    it('subscribes to the list and unsubscribes from the rest, answering an empty 200 once applied', async () => {
      const [a, b, c] = [feed('a'), feed('b'), feed('c')];
      await subscribe([a, b]);
      const since = (await app.as(alice).get(`/api/2/subscriptions/${alice.name}/laptop.json`)).body
        .timestamp;
      // AntennaPod's upload: each URL and a newline, labelled `plain/text`
      const response = await simple.put('txt', `${b}\n${c}\n`, 'plain/text; charset=utf-8');
      expect(response.status).toBe(200);
      expect(response.text).toBe('');
      expect(sorted((await simple.json()).body)).toEqual(sorted([b, c]));
      // the others learn it as a remove
      const changes = await app
        .as(alice)
        .get(`/api/2/subscriptions/${alice.name}/laptop.json?since=${since}`);
      expect(changes.body.remove).toEqual([a]);
      expect(sorted(changes.body.add)).toEqual(sorted([b, c]));
    });

    it('reads a JSON list, as mygpoclient sends it (labelled form-urlencoded)', async () => {
      const [a, b] = [feed('a'), feed('b')];
      await subscribe([a]);
      const response = await simple.put('json', JSON.stringify([b]), 'application/x-www-form-urlencoded');
      expect(response.status).toBe(200);
      expect(response.text).toBe('');
      expect((await simple.json()).body).toEqual([b]);
    });

    it('reads an OPML document, whatever it is labelled', async () => {
      const [a, b, c] = [feed('a'), feed('b'), `${feed('c')}?q=1&r=2`];
      await subscribe([a]);
      for (const type of ['text/x-opml', 'text/xml', 'application/octet-stream']) {
        const response = await simple.put('opml', opmlOf([b, c]), type);
        expect([type, response.status]).toEqual([type, 200]);
      }
      expect(sorted((await simple.json()).body)).toEqual(sorted([b, c]));
    });

    it('skips blank lines and spaces in text, lands other spellings on the stored feed, skips refused URLs', async () => {
      const [a, b] = [feed('a'), feed('b')];
      await subscribe([a]);
      const spelt = a.replace('https://', 'HTTPS://');
      const response = await simple.put(
        'txt',
        `\r\n  ${spelt}  \r\n\n${b}\nftp://refused.example/rss\nnot a url\n`,
        'text/plain',
      );
      expect(response.status).toBe(200);
      expect(sorted((await simple.json()).body)).toEqual(sorted([a, b]));
    });

    it('trims the white space around each URL in every format, as gpodder.net does', async () => {
      const [a, b] = [feed('a'), feed('b')];
      await subscribe([a]);
      const spaced = [` ${a}\t`, `\u00a0${b}\u3000`];
      for (const [format, body] of [
        ['json', JSON.stringify(spaced)],
        ['opml', opmlOf(spaced)],
        ['txt', `${spaced.join('\n')}\n`],
      ] as const) {
        const response = await simple.put(format, body, 'text/plain');
        expect([format, response.status]).toEqual([format, 200]);
        expect([format, sorted((await simple.json()).body)]).toEqual([format, sorted([a, b])]);
      }
      // one subscription each: the spaced spellings landed on the feeds they name
      expect((await app.as(alice).get('/v1/subscriptions')).body.total).toBe(2);
    });

    it('an empty list unsubscribes from everything', async () => {
      await subscribe([feed('a'), feed('b')]);
      for (const [format, body] of [
        ['txt', ''],
        ['json', '[]'],
        ['opml', opmlOf([])],
      ]) {
        expect((await simple.put(format!, body!, 'text/plain')).status).toBe(200);
        expect((await simple.json()).body).toEqual([]);
      }
    });

    it('creates the device it names, by that first use', async () => {
      await simple.put('txt', `${feed()}\n`, 'text/plain', 'bpsync');
      expect((await app.as(alice).get(`/api/2/devices/${alice.name}.json`)).body).toEqual([
        { id: 'bpsync', caption: '', type: 'other', subscriptions: 1 },
      ]);
    });

    it('refuses a body that is not a list in the format with 400, and changes nothing', async () => {
      const kept = feed('kept');
      await subscribe([kept]);
      expect400(
        await simple.put('json', '{"urls": []}', 'application/json'),
        'the body must be a JSON list of URLs',
      );
      expect400(await simple.put('json', 'not json', 'application/json'), 'the body is not JSON');
      expect400(await simple.put('json', '["https://a.example/\\u0000"]', 'application/json'), /U\+0000/);
      expect400(await simple.put('opml', 'not xml', 'text/x-opml'), /OPML|XML/i);
      expect400(await simple.put('opml', '<?xml version="1.0"?><rss/>', 'text/x-opml'), /OPML|opml/);
      expect400(await simple.put('txt', 'https://a.example/\u0000\n', 'text/plain'), /U\+0000/);
      const tooMany = Array.from({ length: 10_001 }, (_, i) => `https://f${i}.example/`).join('\n');
      expect400(await simple.put('txt', tooMany, 'text/plain'), 'the list must hold at most 10000 URLs');
      // A list of which no entry is a URL (an OPML document PUT as text) would empty the set.
      expect400(
        await simple.put('txt', `<?xml version="1.0"?>\n<opml version="2.0">\n</opml>\n`, 'text/plain'),
        'no entry of the list is an http or https URL (the first: "<?xml version=\\"1.0\\"?>")',
      );
      expect400(
        await simple.put('json', '["not a url", 42]', 'application/json'),
        /^Input could not be validated: no entry/,
      );
      expect((await simple.json()).body).toEqual([kept]);
    });

    it('reads OPML in the encoding it declares, and refuses text that is not UTF-8 with 400', async () => {
      const [b, c] = [`https://f\u00fcr.example/${randomUUID()}`, feed('c')];
      const latin1 = Buffer.from(
        `<?xml version="1.0" encoding="ISO-8859-1"?>\n<opml version="2.0"><head><title>Caf\u00e9</title></head>` +
          `<body><outline text="\u00e9" xmlUrl="${b}"/><outline xmlUrl="${c}"/></body></opml>`,
        'latin1',
      );
      expect((await simple.put('opml', latin1, 'text/x-opml')).status).toBe(200);
      expect((await simple.json()).body.sort()).toEqual([b, c].sort());
      expect400(
        await simple.put('txt', Buffer.from(`${feed()}\nhttps://l.example/\u00e9\n`, 'latin1'), 'text/plain'),
        'the text is not UTF-8 (an XML document in another encoding must declare it)',
      );
      expect((await simple.json()).body.sort()).toEqual([b, c].sort());
    });

    it('judges credentials before the encoding: 401 for a body that is not text, without or with wrong ones', async () => {
      const path = `/subscriptions/${alice.name}/phone.txt`;
      const options = { rawBody: Buffer.from([0xff]), headers: { 'content-type': 'text/plain' } };
      expect((await app.anonymous.request('PUT', path, options)).status).toBe(401);
      const bob = await app.freshUser();
      expect((await app.as(bob).request('PUT', path, options)).status).toBe(401);
      expect(
        (await app.anonymous.request('POST', `/api/2/devices/${alice.name}/a.json`, options)).status,
      ).toBe(401);
    });

    it('refuses a device id outside the pattern with 400', async () => {
      expect400(
        await simple.put('txt', `${feed()}\n`, 'text/plain', 'a:b'),
        'the device id must be 1 to 64 of A-Z a-z 0-9 . _ -',
      );
      expect((await simple.json()).body).toEqual([]);
    });

    it("answers 401 for another user's path and leaves their list alone", async () => {
      const bob = await app.freshUser();
      const mine = feed('bob');
      await app.as(bob).post(`/api/2/subscriptions/${bob.name}/phone.json`, { add: [mine], remove: [] });
      const response = await app.as(alice).request('PUT', `/subscriptions/${bob.name}/phone.txt`, {
        rawBody: '',
        headers: { 'content-type': 'text/plain' },
      });
      expect(response.status).toBe(401);
      expect((await app.as(bob).get(`/subscriptions/${bob.name}.json`)).body).toEqual([mine]);
    });

    it('reads a jsonp PUT as a JSON list (the callback wraps answers only)', async () => {
      const [a, b] = [feed('a'), feed('b')];
      await subscribe([a]);
      const response = await simple.put('jsonp', JSON.stringify([b]), 'application/javascript');
      expect(response.status).toBe(200);
      expect(response.text).toBe('');
      expect((await simple.json()).body).toEqual([b]);
      expect400(
        await simple.put('jsonp', `cb(${JSON.stringify([a])})`, 'text/plain'),
        'the body is not JSON',
      );
      expect((await simple.json()).body).toEqual([b]);
    });

    it('answers 400 "Invalid format" for a format it does not have, and changes nothing', async () => {
      const a = feed('a');
      await subscribe([a]);
      for (const format of ['xml', 'yaml', 'JSON'])
        expect400(
          await simple.put(format, '[]', 'application/json'),
          `Invalid format "${format}": a device's list is json, jsonp, opml or txt`,
        );
      expect((await simple.json()).body).toEqual([a]);
    });
  });
});

// On the Kafka log: a 10,000-feed list is one upload, one event, within the log's message size.
describe('gpodder.net simple API: a 10,000-URL list', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());

  it('replaces the set in one text PUT, read back in full in every format', async () => {
    const alice = await app.freshUser();
    const simple = simpleApi(app, alice);
    const urls = Array.from({ length: 10_000 }, (_, i) => `https://feeds${i}.example.com/podcast/rss`);
    const put = await simple.put('txt', `${urls.join('\n')}\n`, 'text/plain');
    expect(put.status).toBe(200);
    expect(put.text).toBe('');
    const json = await simple.json('phone');
    expect(json.body).toHaveLength(10_000);
    expect(sorted(json.body)).toEqual(sorted(urls));
    const opml = await simple.text('opml');
    expect(parseOpml(opml.text).feeds).toHaveLength(10_000);
    const devices = await app.as(alice).get(`/api/2/devices/${alice.name}.json`);
    expect(devices.body).toEqual([{ id: 'phone', caption: '', type: 'other', subscriptions: 10_000 }]);
    // a second PUT of half of them unsubscribes the other half, again in one request
    const half = urls.slice(0, 5_000);
    expect((await simple.put('txt', half.join('\n'), 'text/plain')).status).toBe(200);
    expect(sorted((await simple.json()).body)).toEqual(sorted(half));
  });
});
