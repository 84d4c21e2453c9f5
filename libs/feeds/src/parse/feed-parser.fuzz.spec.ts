import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FEED_TEXT_LIMITS, FeedInfo, FeedParseError, parseFeed } from './feed-parser';

/**
 * Feeds come from anywhere a user's URL leads, so the parser is fuzzed: whatever the bytes (random,
 * or a publisher's feed broken at random), it answers what it read within castlog's bounds or a
 * FeedParseError, never another error. fast-check's seed is printed with any failure, to replay it.
 */

const FIXTURES = join(__dirname, 'fixtures');
const fixtures = readdirSync(FIXTURES).map((name) => readFileSync(join(FIXTURES, name)));
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** What a hostile or broken feed puts in: entity declarations and references, markup that does not
 * close, numeric references to characters XML forbids, deep nesting, other roots, namespaces. */
const HOSTILE = [
  '<!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',
  '<!DOCTYPE rss SYSTEM "file:///etc/passwd">',
  '<!ENTITY x SYSTEM "http://127.0.0.1/">',
  '&b;',
  '&x;',
  '&#0;',
  '&#xD800;',
  '&#x10FFFF;',
  '&amp;lt;',
  '<![CDATA[',
  ']]>',
  '<',
  '>',
  '</channel>',
  '<?xml version="1.0" encoding="UTF-16"?>',
  '<html>',
  '<opml version="2.0">',
  '<feed xmlns="http://www.w3.org/2005/Atom">',
  `${'<a>'.repeat(500)}x${'</a>'.repeat(500)}`,
  '<title>   \u0000 \u001f x \u2028 </title>',
  `<title>${'x'.repeat(5_000)}</title>`,
  '<itunes:new-feed-url>javascript:alert(1)</itunes:new-feed-url>',
  '<link>http://[::1</link>',
  '<podcast:guid>not-a-guid</podcast:guid>',
  '<pubDate>Mon, 31 Feb 99999 25:61:61 +9999</pubDate>',
  'xmlns:itunes="urn:other"',
  '\uFEFF',
  '\u00e9',
];

/** Well-formed elements with hostile content, which leave a feed readable when put in its channel. */
const HOSTILE_ELEMENTS = [
  `<title>${'x'.repeat(5_000)}</title>`,
  '<title>  a\u2028b &amp;lt;script&amp;gt; &#x9; </title>',
  '<title><![CDATA[<script>alert(1)</script>]]></title>',
  '<itunes:author>\u00e9\u0301 &#x1F600; </itunes:author>',
  '<itunes:new-feed-url>javascript:alert(1)</itunes:new-feed-url>',
  '<itunes:new-feed-url>http://127.0.0.1/</itunes:new-feed-url>',
  '<link>http://[::1</link>',
  '<link>https://example.com/a b</link>',
  '<podcast:guid>not-a-guid</podcast:guid>',
  '<language>en-us; DROP TABLE</language>',
  '<item><pubDate>Mon, 31 Feb 99999 25:61:61 +9999</pubDate></item>',
  '<item><pubDate>2099-13-45T99:99:99Z</pubDate></item>',
  `<item>${'<a>'.repeat(200)}x${'</a>'.repeat(200)}</item>`,
  `<description>${'&amp;'.repeat(2_000)}</description>`,
  '<image><url>ftp://example.com/a.png</url></image>',
];

/** Where an element can go inside the feed: after `<channel>`, or after Atom's `<feed …>` tag. */
function channelStart(bytes: Buffer): number {
  const channel = bytes.indexOf('<channel>');
  if (channel >= 0) return channel + '<channel>'.length;
  const feed = bytes.indexOf('<feed');
  const end = feed < 0 ? -1 : bytes.indexOf('>', feed);
  return end < 0 ? -1 : end + 1;
}

/** A fixture with a few random edits: cut short, a hostile piece inserted, a byte changed, or a
 * well-formed element with hostile content put in its channel. */
const mutatedFixture: fc.Arbitrary<Uint8Array> = fc
  .record({
    fixture: fc.constantFrom(...fixtures),
    edits: fc.array(
      fc.oneof(
        fc.record({ cut: fc.double({ min: 0, max: 1, noNaN: true }) }),
        fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), insert: fc.constantFrom(...HOSTILE) }),
        fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), byte: fc.integer({ min: 0, max: 255 }) }),
        fc.record({ element: fc.constantFrom(...HOSTILE_ELEMENTS) }),
        fc.record({ element: fc.constantFrom(...HOSTILE_ELEMENTS) }),
      ),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map(({ fixture, edits }) => {
    let bytes = Buffer.from(fixture);
    for (const edit of edits) {
      if ('cut' in edit) bytes = bytes.subarray(0, Math.floor(edit.cut * bytes.length));
      else if ('element' in edit) {
        const at = channelStart(bytes);
        if (at >= 0)
          bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(edit.element), bytes.subarray(at)]);
      } else {
        const at = Math.floor(edit.at * bytes.length);
        const piece = 'insert' in edit ? Buffer.from(edit.insert) : Buffer.from([edit.byte]);
        bytes = Buffer.concat([bytes.subarray(0, at), piece, bytes.subarray(at + ('byte' in edit ? 1 : 0))]);
      }
    }
    return new Uint8Array(bytes);
  });

/** Text that looks like XML: tags, entities, namespaces and declarations mixed with any character. */
const xmlLikeText: fc.Arbitrary<Uint8Array> = fc
  .array(
    fc.oneof(
      fc.constantFrom(...HOSTILE, '<rss version="2.0">', '<channel>', '<item>', '</item>'),
      fc.string(),
    ),
    {
      maxLength: 30,
    },
  )
  .map((parts) => utf8(parts.join('')));

const contentType = fc.constantFrom(
  undefined,
  'application/rss+xml',
  'text/xml; charset=iso-8859-1',
  'application/xml; charset=utf-16',
  'text/html',
  'application/atom+xml; charset=nonsense',
);

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const SPACES_AND_CONTROLS = /[\s\u0000-\u001f\u007f]+/g;
/** Characters XML 1.0 does not allow in text. */
// eslint-disable-next-line no-control-regex
const NOT_XML_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;

const isHttpUrl = (value: string) => /^https?:\/\//i.test(value) && value.length <= 2_048;

/** Every field within castlog's rules: one-line bounded titles and authors, absolute http(s) URLs,
 * a UUID guid, a count, a valid date. */
function expectWithinRules(info: FeedInfo): void {
  for (const [field, limit] of [
    ['title', FEED_TEXT_LIMITS.title],
    ['author', FEED_TEXT_LIMITS.author],
  ] as const) {
    const value = info[field];
    if (value === undefined) continue;
    expect(value.length).toBeLessThanOrEqual(limit);
    expect(value).not.toMatch(CONTROLS);
    expect(value).toBe(value.trim());
    expect(value).not.toBe('');
  }
  if (info.description !== undefined)
    expect(info.description.length).toBeLessThanOrEqual(FEED_TEXT_LIMITS.description);
  for (const url of [info.link, info.imageUrl, info.newFeedUrl])
    if (url !== undefined) expect(isHttpUrl(url)).toBe(true);
  if (info.podcastGuid !== undefined) expect(info.podcastGuid).toMatch(/^[0-9a-f-]{36}$/);
  expect(Number.isInteger(info.episodeCount) && info.episodeCount >= 0).toBe(true);
  if (info.newestEpisodeAt !== undefined) expect(Number.isNaN(info.newestEpisodeAt.getTime())).toBe(false);
}

/** parseFeed's answer, or its FeedParseError; any other error fails the property. Answers which. */
function readOrRefuse(body: Uint8Array, type: string | undefined): 'read' | 'refused' {
  let info: FeedInfo;
  try {
    info = parseFeed(body, type);
  } catch (error) {
    if (error instanceof FeedParseError) {
      expect(error.message).toMatch(/^Not a feed: /);
      return 'refused';
    }
    throw error;
  }
  expectWithinRules(info);
  return 'read';
}

/** Runs the property over `bodies` and answers how often a feed was read and how often refused. */
function outcomesOf(bodies: fc.Arbitrary<Uint8Array>, numRuns: number): Record<'read' | 'refused', number> {
  const seen = { read: 0, refused: 0 };
  fc.assert(
    fc.property(bodies, contentType, (body, type) => {
      seen[readOrRefuse(body, type)] += 1;
    }),
    { numRuns },
  );
  return seen;
}

describe('parseFeed under fuzzing', () => {
  it('answers a fixture broken at random within its rules, or a FeedParseError', () => {
    const seen = outcomesOf(mutatedFixture, 400);
    // Both ways are exercised: edits that leave a feed readable, and edits that break it.
    expect(seen.read).toBeGreaterThan(10);
    expect(seen.refused).toBeGreaterThan(20);
  });

  it('answers random bytes and XML-like text within its rules, or a FeedParseError', () => {
    const seen = outcomesOf(fc.oneof(fc.uint8Array({ maxLength: 2_048 }), xmlLikeText), 400);
    expect(seen.refused).toBeGreaterThan(0);
  });

  it('reads back any title it is given, escaped as XML, on one line and within its bound', () => {
    const escape = (text: string) =>
      text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
    // Characters XML 1.0 allows in text, surrogate pairs whole.
    const xmlText = fc
      .string({ unit: 'grapheme', maxLength: 1_200 })
      .filter((text) => !NOT_XML_TEXT.test(text));
    fc.assert(
      fc.property(xmlText, (title) => {
        const info = parseFeed(
          utf8(
            `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>${escape(title)}</title></channel></rss>`,
          ),
        );
        const expected = title.replace(SPACES_AND_CONTROLS, ' ').trim();
        if (expected === '') expect(info.title).toBeUndefined();
        else if (expected.length <= FEED_TEXT_LIMITS.title) expect(info.title).toBe(expected);
        else {
          // Cut to the bound, never in the middle of a surrogate pair.
          expect(info.title!.length).toBeGreaterThanOrEqual(FEED_TEXT_LIMITS.title - 1);
          expect(expected.startsWith(info.title!)).toBe(true);
        }
        expectWithinRules(info);
      }),
      { numRuns: 300 },
    );
  });
});
