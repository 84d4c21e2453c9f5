import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FEED_TEXT_LIMITS, FeedParseError, parseFeed } from './feed-parser';

/** Feeds as publishers' tools write them (Transistor, Podlove, Anchor, a hand-kept Latin-1 feed). */
const fixture = (name: string): Uint8Array => readFileSync(join(__dirname, 'fixtures', name));

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A minimal RSS 2.0 feed around `channel`, with the iTunes and podcast namespaces declared. */
const rss = (channel: string, declarations = ''): Uint8Array =>
  utf8(
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" ` +
      `xmlns:podcast="https://podcastindex.org/namespace/1.0"${declarations}><channel>${channel}</channel></rss>`,
  );

const parseError = (body: Uint8Array, contentType?: string): FeedParseError => {
  try {
    parseFeed(body, contentType);
  } catch (error) {
    if (error instanceof FeedParseError) return error;
    throw error;
  }
  throw new Error('parseFeed returned where a FeedParseError was expected');
};

describe('parseFeed: fixtures', () => {
  it('reads an RSS 2.0 feed with iTunes tags, podcast:guid, CDATA and entities', () => {
    const info = parseFeed(fixture('rss-itunes.xml'), 'application/rss+xml; charset=utf-8');
    expect(info).toEqual({
      title: 'Nobody’s Garden & Friends',
      description:
        '<p>Conversations with gardeners about what grows where nobody is looking: allotments, rooftops, ' +
        'railway verges.</p>\n<p>New episodes every Tuesday. ' +
        '<a href="https://hiddengarden.example.org/support">Support the show</a>.</p>',
      link: 'https://hiddengarden.example.org',
      imageUrl: 'https://img.transistorcdn.example.com/hidden-garden/cover-3000x3000.jpg',
      language: 'en-us',
      author: 'Maria Okafor & Tom Reyes',
      podcastGuid: '6d1b4b0e-2f6a-5c61-9d0e-3a8c2b1f4e77',
      // Four items; the trailer's date does not parse, and the newest is not the first item.
      episodeCount: 4,
      newestEpisodeAt: new Date('2024-03-19T05:00:00Z'),
    });
  });

  it('reads an Atom feed: alternate link, logo, author name, xml:lang, newest published date', () => {
    expect(parseFeed(fixture('atom.xml'), 'application/atom+xml')).toEqual({
      title: 'Funkstunde – Technik & Gesellschaft',
      description: '<p>Der Podcast über Technik, die uns alle angeht.</p>',
      link: 'https://funkstunde.example.de/',
      imageUrl: 'https://funkstunde.example.de/media/logo-1400.png',
      language: 'de-DE',
      author: 'Jana Becker',
      episodeCount: 3,
      // FS111 was updated later, but it was published earlier: `published` counts over `updated`.
      newestEpisodeAt: new Date('2024-05-03T07:30:00Z'),
    });
  });

  it('reads an ISO-8859-1 feed by its XML declaration, without a charset from HTTP', () => {
    const info = parseFeed(fixture('latin1.xml'), 'text/xml');
    expect(info.title).toBe('Ça cause : émissions de la Médiathèque');
    expect(info.author).toBe('Médiathèque Élise-Gâteau');
    expect(info.description).toBe(
      'Rencontres, lectures et débats enregistrés à la médiathèque. Entrée libre ; café offert.',
    );
    expect(info.imageUrl).toBe('http://mediatheque.example.fr/podcasts/pochette.jpg');
    expect(info.episodeCount).toBe(2);
    expect(info.newestEpisodeAt).toEqual(new Date('2024-06-14T14:00:00Z'));
  });

  it('reads a UTF-16 feed with a byte order mark, and drops a podcast:guid that is not a UUID', () => {
    const info = parseFeed(fixture('utf16.xml'));
    expect(info).toEqual({
      title: '夜のラジオ 🎙 Yoru no Rajio',
      description: '東京から毎週金曜日にお届けする、夜更かしのための番組です。',
      link: 'https://yoru.example.jp/',
      imageUrl: 'https://yoru.example.jp/artwork.png',
      language: 'ja',
      author: '山田 花子',
      episodeCount: 1,
      newestEpisodeAt: new Date('2024-06-07T13:00:00Z'),
    });
  });

  it('reads itunes:new-feed-url from a feed that has moved', () => {
    const info = parseFeed(fixture('moved.xml'));
    expect(info.newFeedUrl).toBe('https://feeds.newhost.example.net/weekly-byte');
    expect(info.title).toBe('The Weekly Byte');
    expect(info.language).toBe('en');
  });

  it('reads an RSS feed without items: no episodes, no newest date, a guid lower-cased', () => {
    expect(parseFeed(fixture('no-items.xml'))).toEqual({
      title: 'Coming Soon: Field Notes',
      description: "A new show about naturalists' notebooks. First episode in September.",
      link: 'https://fieldnotes.example.org',
      imageUrl: 'https://fieldnotes.example.org/cover.jpg',
      language: 'en-gb',
      author: 'Field Notes Collective',
      podcastGuid: '9b024349-ccf0-5f69-a609-6b82873eab3c',
      episodeCount: 0,
    });
  });

  it('refuses malformed XML, saying where', () => {
    const error = parseError(fixture('malformed.xml'));
    expect(error.message).toMatch(/^Not a feed: the XML is not well-formed at line 11, column \d+: /);
  });

  it('refuses an HTML page, naming it as one', () => {
    expect(parseError(fixture('html-page.html'), 'text/html; charset=utf-8').message).toBe(
      'Not a feed: the document is an HTML page.',
    );
  });
});

describe('parseFeed: documents that are not feeds', () => {
  it.each([
    ['an empty body', new Uint8Array(0)],
    ['white space', utf8(' \n\t ')],
    ['a byte order mark alone', new Uint8Array([0xef, 0xbb, 0xbf])],
  ])('refuses %s as empty', (_name, body) => {
    expect(parseError(body).message).toBe('Not a feed: the body is empty.');
  });

  it('refuses an OPML subscription list', () => {
    const opml =
      '<?xml version="1.0"?><opml version="2.0"><head/><body><outline xmlUrl="https://a.example/f"/></body></opml>';
    expect(parseError(utf8(opml)).message).toBe(
      'Not a feed: the document is an OPML subscription list, not RSS or Atom.',
    );
  });

  it('refuses an XHTML page, an unknown root, an <rss> without a channel and plain text', () => {
    const html =
      '<?xml version="1.0"?>\n<!-- generated -->\n<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>';
    expect(parseError(utf8(html)).message).toBe('Not a feed: the document is an HTML page.');
    expect(parseError(utf8('<svg xmlns="http://www.w3.org/2000/svg"/>')).message).toBe(
      "Not a feed: the root element is <svg>, not RSS's <rss> or Atom's <feed>.",
    );
    expect(parseError(utf8('<rss version="2.0"></rss>')).message).toBe('Not a feed: <rss> has no <channel>.');
    expect(parseError(utf8('404 page not found')).message).toMatch(/^Not a feed: /);
  });

  it('names RSS 1.0 (RDF) as a format it does not read', () => {
    const rdf =
      '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">' +
      '<channel><title>Old</title></channel></rdf:RDF>';
    expect(parseError(utf8(rdf)).message).toMatch(/RSS 1\.0 \(RDF\), which castlog does not read/);
  });
});

describe('parseFeed: encodings', () => {
  const latin1Feed = (declaration: string): Uint8Array =>
    Buffer.from(
      `${declaration}<rss version="2.0"><channel><title>Crème brûlée</title></channel></rss>`,
      'latin1',
    );

  it('takes windows-1252 from the Content-Type charset when the document declares nothing', () => {
    expect(parseFeed(latin1Feed(''), 'application/rss+xml; charset="windows-1252"').title).toBe(
      'Crème brûlée',
    );
    expect(parseFeed(latin1Feed(''), 'text/xml;charset=ISO-8859-1').title).toBe('Crème brûlée');
  });

  it('reads windows-1252 characters beyond Latin-1 (curly quotes, the euro sign)', () => {
    const body = Buffer.concat([
      Buffer.from('<?xml version="1.0" encoding="windows-1252"?><rss><channel><title>'),
      Buffer.from([0x93, 0x80, 0x35, 0x94]),
      Buffer.from('</title></channel></rss>'),
    ]);
    expect(parseFeed(body).title).toBe('“€5”');
  });

  it('reads valid UTF-8 as UTF-8 when the server names a wrong default charset', () => {
    const body = utf8(
      '<?xml version="1.0" encoding="UTF-8"?><rss><channel><title>Crème brûlée</title></channel></rss>',
    );
    expect(parseFeed(body, 'text/xml; charset=iso-8859-1').title).toBe('Crème brûlée');
  });

  it('reads Latin-1 bytes declared as such when the server claims UTF-8', () => {
    const body = latin1Feed('<?xml version="1.0" encoding="ISO-8859-1"?>');
    expect(parseFeed(body, 'application/xml; charset=utf-8').title).toBe('Crème brûlée');
  });

  it('lets a byte order mark decide over the declaration and the charset', () => {
    const text =
      '<?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><title>Ünïcödé</title></channel></rss>';
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
    expect(parseFeed(withBom, 'text/xml; charset=windows-1252').title).toBe('Ünïcödé');
    const bigEndian = Buffer.from(`\ufeff${text}`, 'utf16le').swap16();
    expect(parseFeed(bigEndian).title).toBe('Ünïcödé');
  });

  it('reads UTF-16 without a byte order mark by its shape, and ignores an unknown charset', () => {
    const body = Buffer.from(
      '<?xml version="1.0" encoding="UTF-16"?><rss><channel><title>Zoë</title></channel></rss>',
      'utf16le',
    );
    expect(parseFeed(body).title).toBe('Zoë');
    expect(
      parseFeed(utf8('<rss><channel><title>Zoë</title></channel></rss>'), 'text/xml; charset=x-unknown')
        .title,
    ).toBe('Zoë');
  });

  it('turns bytes invalid in the encoding into U+FFFD rather than failing', () => {
    const body = Buffer.concat([
      Buffer.from('<rss><channel><title>a'),
      Buffer.from([0xff]),
      Buffer.from('b</title></channel></rss>'),
    ]);
    expect(parseFeed(body).title).toBe('a\ufffdb');
  });
});

describe('parseFeed: fields', () => {
  it('trims titles and authors onto one line, and bounds every text', () => {
    const long = 'x'.repeat(10_000);
    const info = parseFeed(
      rss(
        `<title>\n  A title\n  on two lines  </title><itunes:author>${long}</itunes:author>` +
          `<description><![CDATA[${long}]]></description>`,
      ),
    );
    expect(info.title).toBe('A title on two lines');
    expect(info.author).toHaveLength(FEED_TEXT_LIMITS.author);
    expect(info.description).toHaveLength(FEED_TEXT_LIMITS.description);
  });

  it('never cuts a description between the halves of a surrogate pair', () => {
    const description = `${'x'.repeat(FEED_TEXT_LIMITS.description - 1)}🎙🎙`;
    const info = parseFeed(rss(`<description>${description}</description>`));
    expect(info.description).toBe('x'.repeat(FEED_TEXT_LIMITS.description - 1));
  });

  it('keeps HTML in a description as text, escaped or in CDATA, and markup inside it as its text', () => {
    expect(
      parseFeed(rss('<description>&lt;b&gt;Bold&lt;/b&gt; &amp;amp; more</description>')).description,
    ).toBe('<b>Bold</b> &amp; more');
    expect(parseFeed(rss('<description><p>Plain <b>HTML</b></p></description>')).description).toMatch(
      /Plain/,
    );
  });

  it('keeps only absolute http(s) URLs for the link, the image and the new feed URL', () => {
    const info = parseFeed(
      rss(
        '<link>/relative/page</link>' +
          '<itunes:image href="javascript:alert(1)"/><image><url>//cdn.example.com/a.jpg</url></image>' +
          '<itunes:new-feed-url>ftp://files.example.com/feed.xml</itunes:new-feed-url>',
      ),
    );
    expect(info).toEqual({ episodeCount: 0 });
  });

  it('falls back from an unusable iTunes image to the RSS image, and from itunes:author to managingEditor', () => {
    const info = parseFeed(
      rss(
        '<itunes:image href="cover.jpg"/><image><url> https://cdn.example.com/cover.jpg </url></image>' +
          '<managingEditor>ed@example.com (Ed Itor)</managingEditor>',
      ),
    );
    expect(info.imageUrl).toBe('https://cdn.example.com/cover.jpg');
    expect(info.author).toBe('Ed Itor');
  });

  it('reads the description from itunes:summary when there is no description', () => {
    expect(parseFeed(rss('<itunes:summary> Only a summary </itunes:summary>')).description).toBe(
      'Only a summary',
    );
  });

  it('reads the iTunes and podcast namespaces bound to other prefixes, and tag names in any case', () => {
    const body = utf8(
      '<rss version="2.0" xmlns:it="https://www.itunes.com/dtds/podcast-1.0.dtd" ' +
        'xmlns:pi="https://podcastindex.org/namespace/1.0"><channel><Title>Cased</Title>' +
        '<it:author>Prefixed Author</it:author><IT:IMAGE HREF="https://a.example/i.png"/>' +
        '<pi:guid>917393e3-1b1e-5cef-ace4-edaa54e1f810</pi:guid>' +
        '<Item><PubDate>Mon, 01 Jan 2024 00:00:00 GMT</PubDate></Item></channel></rss>',
    );
    expect(parseFeed(body)).toEqual({
      title: 'Cased',
      author: 'Prefixed Author',
      imageUrl: 'https://a.example/i.png',
      podcastGuid: '917393e3-1b1e-5cef-ace4-edaa54e1f810',
      episodeCount: 1,
      newestEpisodeAt: new Date('2024-01-01T00:00:00Z'),
    });
  });

  it('reads an Atom feed written with an atom: prefix, and an RSS link beside an unprefixed Atom link', () => {
    const atom = utf8(
      '<atom:feed xmlns:atom="http://www.w3.org/2005/Atom"><atom:title>Prefixed</atom:title>' +
        '<atom:link href="https://a.example/"/><atom:entry><atom:updated>2024-02-03T04:05:06Z</atom:updated></atom:entry></atom:feed>',
    );
    expect(parseFeed(atom)).toEqual({
      title: 'Prefixed',
      link: 'https://a.example/',
      episodeCount: 1,
      newestEpisodeAt: new Date('2024-02-03T04:05:06Z'),
    });
    const mixed = rss(
      '<link xmlns="http://www.w3.org/2005/Atom" rel="self" href="https://feed.example/rss"/><link>https://site.example/</link>',
    );
    expect(parseFeed(mixed).link).toBe('https://site.example/');
  });

  it('drops a language that is no language tag', () => {
    expect(
      parseFeed(rss('<language>English (United States) of America</language>')).language,
    ).toBeUndefined();
    expect(parseFeed(rss('<language> pt_BR </language>')).language).toBe('pt_BR');
  });
});

describe('parseFeed: episode dates', () => {
  const newest = (...pubDates: string[]): Date | undefined =>
    parseFeed(rss(pubDates.map((date) => `<item><pubDate>${date}</pubDate></item>`).join('')))
      .newestEpisodeAt;

  it.each([
    ['Tue, 02 Jul 2024 10:00:00 GMT', '2024-07-02T10:00:00Z'],
    ['Tue, 2 Jul 2024 10:00:00 +0200', '2024-07-02T08:00:00Z'],
    ['Tue, 02 Jul 2024 10:00 PDT', '2024-07-02T17:00:00Z'],
    ['02 Jul 24 10:00:00 Z', '2024-07-02T10:00:00Z'],
    ['Tuesday, 02 July 2024 10:00:00 -05:00', '2024-07-02T15:00:00Z'],
    ['Tue, 02 Jul 2024 10:00:00', '2024-07-02T10:00:00Z'],
    ['2024-07-02T10:00:00+01:00', '2024-07-02T09:00:00Z'],
  ])('reads %s', (pubDate, instant) => {
    expect(newest(pubDate)).toEqual(new Date(instant));
  });

  it('skips dates that do not parse or name no real day', () => {
    expect(
      newest('yesterday', 'Tue, 31 Feb 2024 10:00:00 GMT', 'Tue, 02 Jul 2024 25:00:00 GMT', ''),
    ).toBeUndefined();
    expect(newest('yesterday', 'Mon, 01 Jul 2024 10:00:00 GMT')).toEqual(new Date('2024-07-01T10:00:00Z'));
  });
});

describe('parseFeed: hostile input', () => {
  it('refuses an external entity and fetches nothing', () => {
    const body = utf8(
      '<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY secret SYSTEM "file:///etc/passwd">]>' +
        '<rss><channel><title>&secret;</title></channel></rss>',
    );
    expect(() => parseFeed(body)).toThrow(FeedParseError);
  });

  it('never expands nested entities (billion laughs)', () => {
    const entities = ['<!ENTITY lol "lol">'];
    for (let level = 1; level <= 9; level++) {
      entities.push(`<!ENTITY lol${level} "${`&lol${level === 1 ? '' : level - 1};`.repeat(10)}">`);
    }
    const body = utf8(
      `<?xml version="1.0"?><!DOCTYPE rss [${entities.join('')}]><rss><channel><title>&lol9;</title></channel></rss>`,
    );
    const started = performance.now();
    let title: string | undefined;
    try {
      title = parseFeed(body).title;
    } catch (error) {
      expect(error).toBeInstanceOf(FeedParseError);
    }
    expect(title === undefined || title.length < 100).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('refuses a document whose internal entities would grow it without bound', () => {
    const body = utf8(
      `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY big "${'x'.repeat(1_000)}">]>` +
        `<rss><channel><title>${'&big;'.repeat(1_000)}</title></channel></rss>`,
    );
    expect(parseError(body).message).toMatch(/^Not a feed: .*limit/i);
  });

  it('reads a DOCTYPE as RSS 0.91 feeds write it, and an internal entity within bounds', () => {
    const body = utf8(
      '<?xml version="1.0"?><!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" ' +
        '"http://my.netscape.com/publish/formats/rss-0.91.dtd" [<!ENTITY host "Jane Doe">]>' +
        '<rss version="0.91"><channel><title>Old show with &host;</title></channel></rss>',
    );
    expect(parseFeed(body).title).toBe('Old show with Jane Doe');
  });

  it('refuses an element named __proto__ rather than building an object with it', () => {
    expect(() => parseFeed(rss('<__proto__><polluted>yes</polluted></__proto__>'))).toThrow(FeedParseError);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('refuses elements nested deeper than any feed nests them', () => {
    const depth = 5_000;
    const body = utf8(`<rss><channel>${'<x>'.repeat(depth)}${'</x>'.repeat(depth)}</channel></rss>`);
    expect(() => parseFeed(body)).toThrow(FeedParseError);
  });

  it('reads a feed of more than 4 MiB and 20,000 episodes in linear time', () => {
    const item = (n: number) =>
      `<item><title>Episode ${n} &amp; more</title><guid>g-${n}</guid>` +
      `<pubDate>Mon, 01 Jan 2024 ${String(n % 24).padStart(2, '0')}:00:00 GMT</pubDate>` +
      `<description><![CDATA[<p>${'Notes. '.repeat(20)}</p>]]></description>` +
      `<enclosure url="https://media.example.com/${n}.mp3" length="1" type="audio/mpeg"/></item>`;
    const items = Array.from({ length: 20_000 }, (_, n) => item(n)).join('\n');
    const body = rss(`<title>Big</title>${items}`);
    expect(body.length).toBeGreaterThan(4 * 1024 * 1024);
    const started = performance.now();
    const info = parseFeed(body);
    const elapsed = performance.now() - started;
    expect(info.episodeCount).toBe(20_000);
    expect(info.newestEpisodeAt).toEqual(new Date('2024-01-01T23:00:00Z'));
    // A few hundred milliseconds on a shared machine; quadratic work would take minutes.
    expect(elapsed).toBeLessThan(15_000);
  });

  it('counts 300,000 empty items without exhausting the stack', () => {
    const body = rss(`<title>Many</title>${'<item/>'.repeat(300_000)}`);
    expect(parseFeed(body).episodeCount).toBe(300_000);
  });
});
