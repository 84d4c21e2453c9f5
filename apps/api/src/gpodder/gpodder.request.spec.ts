import { MAX_UPLOAD_URLS } from '@castlog/event-log';
import { updateUrlsAsSent } from './gpodder.presenter';
import {
  parseEpisodeActions,
  parseEpisodeActionsQuery,
  parseSettingsScope,
  parseSettingsUpdate,
  parseSimpleList,
  parseSyncRequest,
  parseUpload,
  trimFeedUrl,
  trimmedPairs,
} from './gpodder.request';

// Requests with more than one fault: the message names the one the checks meet first.

describe('the gpodder.net requests', () => {
  it('check both lists of an upload for their type before either for its length', () => {
    const tooMany = Array.from({ length: MAX_UPLOAD_URLS + 1 }, (_, i) => `https://example.com/${i}`);
    expect(() => parseUpload(JSON.stringify({ add: tooMany, remove: 'x' }))).toThrow(
      'remove must be an array of URLs',
    );
    expect(() => parseUpload(JSON.stringify({ add: tooMany, remove: tooMany }))).toThrow(
      `add must hold at most ${MAX_UPLOAD_URLS} URLs`,
    );
  });

  it('check the shape of synchronize before its device ids', () => {
    expect(() => parseSyncRequest(JSON.stringify({ synchronize: [['bad id'], 5] }))).toThrow(
      'synchronize must be a list of lists of device ids',
    );
    expect(() => parseSyncRequest(JSON.stringify({ synchronize: [['a', 'bad id']] }))).toThrow(
      'synchronize must be 1 to 64 of A-Z a-z 0-9 . _ -',
    );
  });

  it('check the number of episode actions before any action, then each in order, play fields last', () => {
    const play = { podcast: 'p', episode: 'e', action: 'PLAY', position: -1 };
    expect(() => parseEpisodeActions(JSON.stringify(Array(MAX_UPLOAD_URLS + 1).fill(3)))).toThrow(
      `the body must hold at most ${MAX_UPLOAD_URLS} episode actions`,
    );
    expect(() => parseEpisodeActions(JSON.stringify([play, { ...play, podcast: '' }]))).toThrow(
      'actions[0].position must be an integer from 0 to 2147483647 (seconds)',
    );
    expect(() => parseEpisodeActions(JSON.stringify([{ ...play, device: 'a b' }]))).toThrow(
      'actions[0].device must be 1 to 64 of A-Z a-z 0-9 . _ -',
    );
    expect(() =>
      parseEpisodeActions(JSON.stringify([{ ...play, timestamp: '10000-01-01T00:00:00Z' }])),
    ).toThrow('actions[0].timestamp must be an RFC 3339 date-time');
    expect(parseEpisodeActions(JSON.stringify([{ ...play, action: 'New', position: -1 }]))).toEqual({
      actions: [{ podcast: 'p', episode: 'e', action: 'new' }],
      updateUrls: [],
    });
  });

  it('read the episode actions query', () => {
    expect(parseEpisodeActionsQuery({ since: '0', aggregated: 'TRUE', device: 'phone' })).toEqual({
      since: null,
      device: 'phone',
      aggregated: true,
    });
    expect(() => parseEpisodeActionsQuery({ since: ['1', '2'] })).toThrow('since must be given once');
  });

  it('read the settings scopes from their queries, each needing its parameters, once each', () => {
    expect(parseSettingsScope('account', { device: 'ignored' })).toEqual({ kind: 'account' });
    expect(parseSettingsScope('device', { device: 'phone', podcast: 'x' })).toEqual({
      kind: 'device',
      deviceId: 'phone',
    });
    expect(parseSettingsScope('episode', { podcast: ' p ', episode: 'e' })).toEqual({
      kind: 'episode',
      podcast: ' p ',
      episode: 'e',
    });
    expect(() => parseSettingsScope('device', {})).toThrow('the device scope needs the device parameter');
    expect(() => parseSettingsScope('device', { device: 'a b' })).toThrow(
      'device must be 1 to 64 of A-Z a-z 0-9 . _ -',
    );
    expect(() => parseSettingsScope('episode', { podcast: 'p' })).toThrow(
      'the episode scope needs the episode parameter',
    );
    expect(() => parseSettingsScope('episode', { episode: 'e' })).toThrow(
      'the episode scope needs the podcast parameter',
    );
    expect(() => parseSettingsScope('podcast', { podcast: ['a', 'b'] })).toThrow(
      'podcast must be given once',
    );
    expect(() => parseSettingsScope('podcast', { podcast: '' })).toThrow(
      'podcast must be 1 to 2048 characters',
    );
    expect(() => parseSettingsScope('podcast', { podcast: 'x'.repeat(2049) })).toThrow(
      'podcast must be 1 to 2048 characters',
    );
  });

  it('check a settings change for its shape, then the number of keys, then each key, then the values', () => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'x'.repeat(20_000)]));
    expect(parseSettingsUpdate('{}')).toEqual({ set: {}, remove: [] });
    expect(parseSettingsUpdate('{"set": {"constructor": 1, "10": 2}}')).toEqual({
      set: { constructor: 1, '10': 2 },
      remove: [],
    });
    expect(() => parseSettingsUpdate('[]')).toThrow('the body must be a JSON object');
    expect(() => parseSettingsUpdate(JSON.stringify({ set: many, remove: 'a' }))).toThrow(
      'remove must be a list of keys',
    );
    expect(() => parseSettingsUpdate(JSON.stringify({ set: [1] }))).toThrow(
      'set must be an object of settings',
    );
    expect(() => parseSettingsUpdate(JSON.stringify({ set: many }))).toThrow(
      'set must hold at most 100 keys',
    );
    expect(() =>
      parseSettingsUpdate(JSON.stringify({ set: { a: 'x'.repeat(20_000) }, remove: [7] })),
    ).toThrow('setting keys must be strings of 1 to 255 characters');
    expect(() => parseSettingsUpdate(JSON.stringify({ set: { a: 'x'.repeat(20_000) } }))).toThrow(
      'the value of "a" must be at most 16384 bytes of JSON',
    );
    expect(() => parseSettingsUpdate('{"set": {"__proto__": 1}}')).toThrow(/__proto__/);
  });
});

describe('feed URLs with white space around them, as gpodder.net trims them', () => {
  const URL = 'https://feeds.example.com/spaced.xml';

  it("strips what Python's str.strip() strips, and a byte order mark, from both ends only", () => {
    const pythonSpace =
      '\t\n\u000b\f\r\u001c\u001d\u001e\u001f \u0085\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000';
    expect(trimFeedUrl(`${pythonSpace}${URL}${pythonSpace}`)).toBe(URL);
    expect(trimFeedUrl(`\ufeff${URL}`)).toBe(URL);
    // Not white space to Python: a zero-width space stays, and the /v1 rules refuse the URL.
    expect(trimFeedUrl(`\u200b${URL}`)).toBe(`\u200b${URL}`);
    expect(trimFeedUrl(`${URL}?q=a b`)).toBe(`${URL}?q=a b`);
    expect(trimFeedUrl(' \t ')).toBe('');
    expect(trimFeedUrl(42)).toBe(42);
  });

  it('costs the length of a run of white space inside a URL, once', () => {
    const long = `x${' '.repeat(2_000_000)}y`;
    const started = performance.now();
    expect(trimFeedUrl(` ${long} `)).toBe(long);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('reads an upload trimmed, keeping what was sent for the answer', () => {
    const upload = parseUpload(
      JSON.stringify({ add: [` ${URL}`, 42], remove: ['https://x.example/rs.xml '] }),
    );
    expect(upload.add.map((item) => item.feedUrl)).toEqual([URL, 42]);
    expect(upload.remove).toEqual(['https://x.example/rs.xml']);
    expect(upload.sent).toEqual([` ${URL}`, 42, 'https://x.example/rs.xml ']);
    expect(() => parseUpload(JSON.stringify({ add: [` ${URL}`], remove: [`${URL}\n`] }))).toThrow(
      `${URL} is both added and removed`,
    );
  });

  it('trims the URLs of a simple-API PUT in every format', () => {
    const opml = `<opml version="2.0"><body><outline xmlUrl="\u0085${URL}&#9;"/></body></opml>`;
    for (const [format, body] of [
      ['json', JSON.stringify([`\u3000${URL} `])],
      ['opml', opml],
      ['txt', `\ufeff ${URL}\u001f\r\n  \n`],
    ] as const)
      expect(parseSimpleList(format, body).map((item) => item.feedUrl)).toEqual([URL]);
  });

  it("trims an episode action's podcast, reports each one trimmed once, and refuses one of white space only", () => {
    const action = (podcast: string) => ({ podcast, episode: 'e', action: 'new' });
    const parsed = parseEpisodeActions(JSON.stringify([action(` ${URL}`), action(` ${URL}`), action(URL)]));
    expect(parsed.actions.map((a) => a.podcast)).toEqual([URL, URL, URL]);
    expect(parsed.updateUrls).toEqual([[` ${URL}`, URL]]);
    expect(() => parseEpisodeActions(JSON.stringify([action(' \t ')]))).toThrow(
      'actions[0].podcast must be a non-empty string',
    );
    expect(trimmedPairs([URL, 7, `${URL}\n`, `${URL}\n`])).toEqual([[`${URL}\n`, URL]]);
  });

  it("answers an upload's update_urls about the URLs as sent", () => {
    const stored = 'https://feeds.example.com/Spaced.xml';
    // The decider judged the trimmed URLs: one stored in another spelling, one refused, one as sent.
    const judged: [string, string][] = [
      ['HTTPS://feeds.example.com/Spaced.xml', stored],
      ['ftp://x.example/rss', ''],
      ['42', ''],
    ];
    const sent = [
      ' HTTPS://feeds.example.com/Spaced.xml',
      'HTTPS://feeds.example.com/Spaced.xml\t',
      ' ftp://x.example/rss',
      `${URL} `,
      42,
      'https://kept.example/rss',
    ];
    expect(updateUrlsAsSent(judged, sent)).toEqual([
      [' HTTPS://feeds.example.com/Spaced.xml', stored],
      ['HTTPS://feeds.example.com/Spaced.xml\t', stored],
      [' ftp://x.example/rss', ''],
      ['42', ''],
      [`${URL} `, URL],
    ]);
    // A URL sent as judged keeps the decider's pair beside its spaced spelling.
    expect(
      updateUrlsAsSent([['ftp://x.example/rss', '']], ['ftp://x.example/rss', 'ftp://x.example/rss ']),
    ).toEqual([
      ['ftp://x.example/rss', ''],
      ['ftp://x.example/rss ', ''],
    ]);
  });
});
