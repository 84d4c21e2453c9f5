import fc from 'fast-check';
import { checkFeedUrl, isGuid, MAX_FEED_URL_LENGTH, normalizeFeedUrl, normalizeGuid } from './feed-url';

const ok = (feedUrl: string) => ({ ok: true, feedUrl, normalized: normalizeFeedUrl(feedUrl) });
const ko = (feedUrl: string, message: string) => ({ ok: false, feedUrl, message });

describe('feed_url must be an absolute http or https URL', () => {
  it.each([
    'https://example.com/rss1',
    'http://example.com/feed?id=1&x=%20',
    'HTTPS://A.example:443/rss#top',
  ])('accepts %s, keeping it as sent', (url) => expect(checkFeedUrl(url)).toEqual(ok(url)));

  it('accepts user info, ports and non-ASCII hosts', () => {
    for (const url of ['https://u:p@a.example:8443/rss', 'https://例え.jp/rss']) {
      expect(checkFeedUrl(url)).toEqual(ok(url));
    }
  });

  it('answers No protocol present when there is no scheme', () => {
    for (const url of [
      'example.com/feed4',
      '//example.com/rss',
      '/rss',
      'example.com:8080/rss',
      'localhost:80',
    ]) {
      expect(checkFeedUrl(url)).toEqual(ko(url, 'No protocol present'));
    }
  });

  it('answers Unsupported protocol for another scheme', () => {
    for (const url of [
      'ftp://example.com/rss',
      'feed://example.com/rss',
      'mailto:a@example.com',
      'file:///rss',
    ]) {
      expect(checkFeedUrl(url)).toEqual(ko(url, 'Unsupported protocol'));
    }
  });

  it('answers Invalid URL for an http(s) URL that does not parse or has no host', () => {
    for (const url of [
      'https://',
      'https:///rss',
      'https:a.example/rss',
      'http://exa mple.com/',
      ' https://a.example/rss',
    ]) {
      expect(checkFeedUrl(url)).toEqual(ko(url, 'Invalid URL'));
    }
    expect(checkFeedUrl('')).toEqual(ko('', 'Invalid URL'));
  });

  it('accepts 2048 characters and answers Invalid URL beyond', () => {
    const prefix = 'https://a.example/';
    const longest = prefix + 'x'.repeat(MAX_FEED_URL_LENGTH - prefix.length);
    expect(longest).toHaveLength(2048);
    expect(checkFeedUrl(longest)).toEqual(ok(longest));
    expect(checkFeedUrl(longest + 'x')).toEqual(ko(longest + 'x', 'Invalid URL'));
  });
});

describe('a feed_url that is missing or not a string', () => {
  it.each([
    [undefined, ''],
    [42, '42'],
    [null, 'null'],
    [true, 'true'],
    [{ url: 'https://a.example' }, '{"url":"https://a.example"}'],
    [['https://a.example'], '["https://a.example"]'],
  ])('%p is Invalid URL with feed_url %p', (value, text) =>
    expect(checkFeedUrl(value)).toEqual(ko(text, 'Invalid URL')),
  );
});

describe('feed_urls are compared after normalising', () => {
  it('lower-cases scheme and host, drops the default https port and the fragment', () =>
    expect(normalizeFeedUrl('HTTPS://A.example:443/rss#top')).toBe(
      normalizeFeedUrl('https://a.example/rss'),
    ));

  it('drops the default http port 80', () =>
    expect(normalizeFeedUrl('http://A.EXAMPLE:80/rss')).toBe(normalizeFeedUrl('http://a.example/rss')));

  it('keeps a non-default port, the path case and the query', () => {
    expect(normalizeFeedUrl('https://a.example:8443/rss')).not.toBe(
      normalizeFeedUrl('https://a.example/rss'),
    );
    expect(normalizeFeedUrl('https://a.example/RSS')).not.toBe(normalizeFeedUrl('https://a.example/rss'));
    expect(normalizeFeedUrl('https://a.example/rss?a=1')).not.toBe(normalizeFeedUrl('https://a.example/rss'));
  });

  it('does not equate http with https, nor another path', () => {
    expect(normalizeFeedUrl('http://a.example/rss')).not.toBe(normalizeFeedUrl('https://a.example/rss'));
    expect(normalizeFeedUrl('https://a.example/rss2')).not.toBe(normalizeFeedUrl('https://a.example/rss'));
  });

  it('returns what it cannot parse unchanged', () => expect(normalizeFeedUrl('not a url')).toBe('not a url'));

  // What WHATWG `URL` leaves once its fragment is cleared.
  const withoutFragment = (url: string): string => {
    const parsed = new URL(url);
    parsed.hash = '';
    return parsed.href;
  };

  it.each([
    'https://a.example/#',
    'https://a.example/rss?q=#',
    'https://a.example/rss?q=1#a#b',
    'https://a.example/a%23b?c%23d#e',
    'https://us%23er:p%23w@a.example/rss#x',
    'https://a.example/rss?q=a b#c d',
    'https://a.example/réss?é=1#é',
  ])('drops the fragment of %p as clearing it would', (url) =>
    expect(normalizeFeedUrl(url)).toBe(withoutFragment(url)),
  );

  it('drops any fragment as clearing it would', () =>
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string(), (url, tail) => {
        const text = `${url}#${tail}`;
        expect(normalizeFeedUrl(url)).toBe(withoutFragment(url));
        expect(normalizeFeedUrl(text)).toBe(withoutFragment(text));
      }),
    ));
});

describe('a feed_url checked again', () => {
  it('gets the same answer, however many other texts were checked in between', () => {
    const texts = ['HTTPS://A.example:443/rss#top', 'ftp://a.example/rss', 'example.com:8080/rss', ' '];
    const first = texts.map(checkFeedUrl);
    for (let i = 0; i < 20_000; i += 1) checkFeedUrl(`https://feeds.example.com/${i}`);
    expect(texts.map(checkFeedUrl)).toEqual(first);
    expect(first).toEqual([
      ok('HTTPS://A.example:443/rss#top'),
      ko('ftp://a.example/rss', 'Unsupported protocol'),
      ko('example.com:8080/rss', 'No protocol present'),
      ko(' ', 'Invalid URL'),
    ]);
  });
});

describe('guids are UUIDs of any version, any case', () => {
  it.each([
    '64c1593b-5a1e-4e89-b8a3-d91501065e80',
    '64C1593B-5A1E-4E89-B8A3-D91501065E80',
    '00000000-0000-0000-0000-000000000000',
    '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
  ])('accepts %s', (guid) => expect(isGuid(guid)).toBe(true));

  it.each([
    '',
    'not-a-guid',
    '64c1593b5a1e4e89b8a3d91501065e80',
    '{64c1593b-5a1e-4e89-b8a3-d91501065e80}',
    42,
    null,
  ])('refuses %p', (value) => expect(isGuid(value)).toBe(false));

  it('stores guids lower-case', () =>
    expect(normalizeGuid('64C1593B-5A1E-4E89-B8A3-D91501065E80')).toBe(
      '64c1593b-5a1e-4e89-b8a3-d91501065e80',
    ));
});
