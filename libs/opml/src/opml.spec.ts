import { XMLParser } from 'fast-xml-parser';
import { OpmlError, parseOpml, toOpml, toPodcastsXml } from './opml';

const doc = (body: string, head = '<head><title>t</title></head>') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<opml version="2.0">${head}<body>${body}</body></opml>`;

describe('parseOpml', () => {
  it('reads a single outline as a list of one feed', () => {
    expect(parseOpml(doc('<outline type="rss" text="One" xmlUrl="https://a.example/rss"/>'))).toEqual({
      feeds: [{ url: 'https://a.example/rss', title: 'One' }],
    });
  });

  it('reads outlines at any depth, in document order, with or without a type', () => {
    const text = doc(`
      <outline text="News">
        <outline text="Tech">
          <outline type="rss" text="Deep" xmlUrl="https://deep.example/feed"/>
        </outline>
        <outline text="Untyped" xmlUrl="https://untyped.example/feed"/>
      </outline>
      <outline type="link" text="Site" url="https://site.example/"/>
      <outline type="rss" text="Top" xmlUrl="https://top.example/feed"/>`);
    expect(parseOpml(text).feeds).toEqual([
      { url: 'https://deep.example/feed', title: 'Deep' },
      { url: 'https://untyped.example/feed', title: 'Untyped' },
      { url: 'https://top.example/feed', title: 'Top' },
    ]);
  });

  it('reads attribute names in any case', () => {
    const text = doc(`
      <outline TEXT="Upper" XMLURL="https://upper.example/rss"/>
      <outline text="Lower" xmlurl="https://lower.example/rss"/>
      <OUTLINE Title="Mixed" XmlUrl="https://mixed.example/rss"/>`);
    expect(parseOpml(text).feeds).toEqual([
      { url: 'https://upper.example/rss', title: 'Upper' },
      { url: 'https://lower.example/rss', title: 'Lower' },
      { url: 'https://mixed.example/rss', title: 'Mixed' },
    ]);
  });

  it('prefers title over text, and leaves the title out when neither is there', () => {
    const text = doc(`
      <outline text="Text" title="Title" xmlUrl="https://a.example/rss"/>
      <outline xmlUrl="https://b.example/rss"/>
      <outline text="  " xmlUrl="https://c.example/rss"/>`);
    expect(parseOpml(text).feeds).toEqual([
      { url: 'https://a.example/rss', title: 'Title' },
      { url: 'https://b.example/rss' },
      { url: 'https://c.example/rss' },
    ]);
  });

  it('decodes named and numeric entities once', () => {
    const text = doc(
      '<outline text="Caf&#233; &#x2603; &amp; &lt;b&gt; &quot;q&quot; &apos;s&apos; &amp;amp;" ' +
        'xmlUrl="https://a.example/rss?x=1&amp;y=2"/>',
    );
    expect(parseOpml(text).feeds).toEqual([
      { url: 'https://a.example/rss?x=1&y=2', title: 'Café ☃ & <b> "q" \'s\' &amp;' },
    ]);
  });

  it('keeps each URL once, with the first title, and trims URLs', () => {
    const text = doc(`
      <outline text="First" xmlUrl=" https://a.example/rss "/>
      <outline text="Folder"><outline text="Second" xmlUrl="https://a.example/rss"/></outline>
      <outline text="Other" xmlUrl="https://b.example/rss"/>`);
    expect(parseOpml(text).feeds).toEqual([
      { url: 'https://a.example/rss', title: 'First' },
      { url: 'https://b.example/rss', title: 'Other' },
    ]);
  });

  it('reads an empty body, a byte order mark and a document without a head', () => {
    expect(parseOpml(doc('')).feeds).toEqual([]);
    expect(parseOpml('<opml version="1.0"><body/></opml>').feeds).toEqual([]);
    expect(parseOpml('\uFEFF' + doc('<outline xmlUrl="https://a.example/"/>', '')).feeds).toEqual([
      { url: 'https://a.example/' },
    ]);
  });

  it('reads a bare ampersand, which some exporters leave unescaped, as itself', () => {
    expect(
      parseOpml(doc('<outline text="A & B" xmlUrl="https://a.example/?a=1&b=2&amp;c=3"/>')).feeds,
    ).toEqual([{ url: 'https://a.example/?a=1&b=2&c=3', title: 'A & B' }]);
  });

  describe('throws OpmlError naming what is wrong', () => {
    it.each([
      ['empty text', '', /empty/],
      ['white space', '  \n ', /empty/],
      ['plain text', 'https://a.example/rss\nhttps://b.example/rss', /not well-formed at line 1/],
      ['JSON', '["https://a.example/rss"]', /not well-formed/],
      ['an unclosed element', '<opml><body><outline xmlUrl="x"></body></opml>', /not well-formed/],
      [
        'another root',
        '<?xml version="1.0"?><rss version="2.0"><channel/></rss>',
        /root element is <rss>, not <opml>/,
      ],
      ['no body', '<opml version="2.0"><head><title>t</title></head></opml>', /<opml> has no <body>/],
    ])('%s', (_name, text, message) => {
      expect(() => parseOpml(text)).toThrow(OpmlError);
      expect(() => parseOpml(text)).toThrow(message);
    });
  });
});

describe('toOpml', () => {
  it('writes an OPML 2.0 document with a head and one rss outline per feed', () => {
    const text = toOpml(
      [{ url: 'https://a.example/rss?x=1&y=2', title: 'A & "B" <c>' }, { url: 'https://b.example/' }],
      {
        title: 'alice',
        dateCreated: new Date('2024-03-01T10:20:30Z'),
      },
    );
    expect(text).toContain('<opml version="2.0">');
    expect(text).toContain('<title>alice</title>');
    expect(text).toContain('<dateCreated>Fri, 01 Mar 2024 10:20:30 GMT</dateCreated>');
    expect(text).toContain(
      '<outline type="rss" text="A &amp; &quot;B&quot; &lt;c&gt;" title="A &amp; &quot;B&quot; &lt;c&gt;" ' +
        'xmlUrl="https://a.example/rss?x=1&amp;y=2"/>',
    );
    expect(text).toContain(
      '<outline type="rss" text="https://b.example/" title="https://b.example/" xmlUrl="https://b.example/"/>',
    );
  });

  it('writes an empty body for no feeds', () => {
    expect(parseOpml(toOpml([])).feeds).toEqual([]);
  });

  it('round-trips through parseOpml', () => {
    const feeds = [
      { url: 'https://a.example/rss?x=1&y=2&amp;z', title: 'Ça & ça <b> "q" \'s\' ☃ 😀' },
      { url: 'https://b.example/feed', title: 'Ünïcödé 日本語 ポッドキャスト' },
      { url: 'https://c.example/feed', title: 'https://c.example/feed' },
    ];
    expect(parseOpml(toOpml(feeds, { title: 'x & y' })).feeds).toEqual(feeds);
  });

  it('writes white space and characters XML cannot carry so that they read back the same', () => {
    const written = parseOpml(
      toOpml([{ url: 'https://a.example/', title: ' two\nlines\u0001\tand tab ' }]),
    ).feeds;
    expect(written).toEqual([{ url: 'https://a.example/', title: 'two lines and tab' }]);
    expect(parseOpml(toOpml(written)).feeds).toEqual(written);
  });
});

describe('toPodcastsXml', () => {
  it("writes gpodder.net's podcast list: a podcast with its title (else its URL) and URL per feed", () => {
    expect(
      toPodcastsXml([
        { url: 'https://a.example/rss?x=1&y=<2>', title: 'A & "B" </title><script>' },
        { url: 'https://b.example/rss' },
        { url: 'https://c.example/rss', title: ' \u0001 ' },
      ]),
    ).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<podcasts>\n' +
        '  <podcast>\n    <title>A &amp; &quot;B&quot; &lt;/title&gt;&lt;script&gt;</title>\n' +
        '    <url>https://a.example/rss?x=1&amp;y=&lt;2&gt;</url>\n  </podcast>\n' +
        '  <podcast>\n    <title>https://b.example/rss</title>\n    <url>https://b.example/rss</url>\n  </podcast>\n' +
        '  <podcast>\n    <title>https://c.example/rss</title>\n    <url>https://c.example/rss</url>\n  </podcast>\n' +
        '</podcasts>\n',
    );
  });

  it('writes an empty list for no feeds, and reads back as written', () => {
    expect(toPodcastsXml([])).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<podcasts/>\n');
    const feeds = [{ url: 'https://a.example/?q=1&r=2', title: 'Ünïcode <&> 🎙' }];
    const read = new XMLParser({ parseTagValue: false }).parse(toPodcastsXml(feeds));
    expect(read.podcasts.podcast).toEqual({ title: feeds[0]!.title, url: feeds[0]!.url });
  });
});

describe('a 10,000-feed document', () => {
  const feeds = Array.from({ length: 10_000 }, (_, i) => ({
    url: `https://feeds.example/${i}/rss?a=${i}&b=é`,
    title: `Feed ${i} & «${i}»`,
  }));

  it('parses in one pass, every feed in order', () => {
    const parsed = parseOpml(toOpml(feeds)).feeds;
    expect(parsed).toHaveLength(10_000);
    expect(parsed[0]).toEqual(feeds[0]);
    expect(parsed[4_321]).toEqual(feeds[4_321]);
    expect(parsed[9_999]).toEqual(feeds[9_999]);
  });
});

describe('characters the log cannot store', () => {
  it('are dropped when numeric references name them (U+0000, a lone surrogate)', () => {
    const text = doc('<outline text="a&#0;b&#xD800;c&#x1F600;" xmlUrl="https://a.example/&#0;x"/>');
    expect(parseOpml(text).feeds).toEqual([{ url: 'https://a.example/x', title: 'abc😀' }]);
  });
});
