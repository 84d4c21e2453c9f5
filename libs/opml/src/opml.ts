import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';

/** One feed of an OPML document: its URL (the outline's `xmlUrl`) and its title, when it has one. */
export interface OpmlFeed {
  readonly url: string;
  readonly title?: string;
}

/** What an OPML document holds for castlog: its feeds, each URL once, in document order. */
export interface OpmlDocument {
  readonly feeds: OpmlFeed[];
}

/** The text is not an OPML document; the message says what is wrong with it. */
export class OpmlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpmlError';
  }
}

/** What `toOpml` writes in the document's head. */
export interface OpmlHead {
  /** The head's `title` (default "castlog subscriptions"). */
  readonly title?: string;
  /** The head's `dateCreated`, written in RFC 822 form; left out when not given. */
  readonly dateCreated?: Date;
}

/** Attributes are read under this prefix, so an attribute never collides with a child element. */
const ATTRIBUTE = '@_';

type XmlNode = { [name: string]: unknown };

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: ATTRIBUTE,
  // OPML writers differ in case (`xmlUrl`, `xmlurl`, `XMLURL`): names are compared in lower case.
  transformAttributeName: (name) => name.toLowerCase(),
  transformTagName: (name) => name.toLowerCase(),
  parseAttributeValue: false,
  parseTagValue: false,
  // Named XML entities are always decoded; this adds numeric references (`&#233;`, `&#x2603;`) and
  // the HTML names some exporters write (`&nbsp;`). Decoding is one pass: `&amp;lt;` stays `&lt;`.
  htmlEntities: true,
  // A lone outline is still a list, at every depth.
  isArray: (name, _path, _isLeaf, isAttribute) => !isAttribute && name === 'outline',
});

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: ATTRIBUTE,
  format: true,
  indentBy: '  ',
  suppressEmptyNode: true,
  processEntities: true,
});

/** Reads the feeds of an OPML document: every `outline` with an `xmlUrl`, at any depth (category
 * outlines nest them), whatever its `type`; entities decoded, URLs trimmed, each URL once (the first
 * outline naming it gives the title). Outlines without `xmlUrl` are skipped. Throws `OpmlError` when
 * the text is not well-formed XML or has no `<opml>` root with a `<body>`. */
export function parseOpml(text: string): OpmlDocument {
  const xml = text.replace(/^\uFEFF/, '');
  if (xml.trim() === '') throw new OpmlError('Not an OPML document: the text is empty.');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw new OpmlError(
      `Not an OPML document: the XML is not well-formed at line ${line}, column ${col}: ${msg}`,
    );
  }
  let root: XmlNode;
  try {
    root = parser.parse(xml) as XmlNode;
  } catch (error) {
    throw new OpmlError(`Not an OPML document: ${error instanceof Error ? error.message : String(error)}`);
  }
  const opml = root['opml'];
  if (opml === undefined) {
    const names = Object.keys(root).filter((name) => !name.startsWith('?'));
    throw new OpmlError(`Not an OPML document: the root element is <${names[0] ?? '?'}>, not <opml>.`);
  }
  const body = isNode(opml) ? opml['body'] : undefined;
  if (body === undefined) throw new OpmlError('Not an OPML document: <opml> has no <body>.');

  const feeds: OpmlFeed[] = [];
  const seen = new Set<string>();
  // Depth first, in document order, without recursion.
  const pending: unknown[] = [...outlinesOf(body)].reverse();
  while (pending.length > 0) {
    const outline = pending.pop();
    if (!isNode(outline)) continue;
    const url = attribute(outline, 'xmlurl');
    if (url !== undefined && !seen.has(url)) {
      seen.add(url);
      const title = attribute(outline, 'title') ?? attribute(outline, 'text');
      feeds.push(title === undefined ? { url } : { url, title });
    }
    pending.push(...[...outlinesOf(outline)].reverse());
  }
  return { feeds };
}

/** Writes an OPML 2.0 document: a head with the title and `dateCreated`, and one
 * `<outline type="rss" text=… title=… xmlUrl=…/>` per feed (the title falls back to the URL). */
export function toOpml(feeds: readonly OpmlFeed[], head: OpmlHead = {}): string {
  const outlines = feeds.map((feed) => {
    const url = clean(feed.url);
    const title = feed.title === undefined ? '' : clean(feed.title);
    const text = title === '' ? url : title;
    return {
      [`${ATTRIBUTE}type`]: 'rss',
      [`${ATTRIBUTE}text`]: text,
      [`${ATTRIBUTE}title`]: text,
      [`${ATTRIBUTE}xmlUrl`]: url,
    };
  });
  const headNode: XmlNode = { title: clean(head.title ?? 'castlog subscriptions') };
  if (head.dateCreated !== undefined) headNode['dateCreated'] = head.dateCreated.toUTCString();
  return builder.build({
    '?xml': { [`${ATTRIBUTE}version`]: '1.0', [`${ATTRIBUTE}encoding`]: 'UTF-8' },
    opml: {
      [`${ATTRIBUTE}version`]: '2.0',
      head: headNode,
      body: outlines.length === 0 ? '' : { outline: outlines },
    },
  }) as string;
}

/** gpodder.net's podcast list (the simple API's `xml` format, mygpo's `podcasts.xml`): one
 * `<podcast>` per feed, in order, with its `<title>` (the feed's title, else its URL) and `<url>`,
 * escaped as XML text, characters XML 1.0 cannot carry dropped. */
export function toPodcastsXml(feeds: readonly OpmlFeed[]): string {
  const podcasts = feeds.map((feed) => {
    const url = clean(feed.url);
    const title = feed.title === undefined ? '' : clean(feed.title);
    return { title: title === '' ? url : title, url };
  });
  return builder.build({
    '?xml': { [`${ATTRIBUTE}version`]: '1.0', [`${ATTRIBUTE}encoding`]: 'UTF-8' },
    podcasts: podcasts.length === 0 ? '' : { podcast: podcasts },
  }) as string;
}

function isNode(value: unknown): value is XmlNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function outlinesOf(node: unknown): readonly unknown[] {
  if (!isNode(node)) return [];
  const outlines = node['outline'];
  return Array.isArray(outlines) ? outlines : [];
}

/** An attribute's value, cleaned, or undefined when it is missing or blank. */
function attribute(node: XmlNode, name: string): string | undefined {
  const value = node[`${ATTRIBUTE}${name}`];
  if (typeof value !== 'string') return undefined;
  const cleaned = clean(value);
  return cleaned === '' ? undefined : cleaned;
}

/** Characters XML 1.0 cannot carry are dropped, and runs of white space (line breaks too, which an
 * attribute cannot keep) become one space, so what `toOpml` writes `parseOpml` reads back unchanged. */
function clean(value: string): string {
  return value
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The codec's limit on the items of one SubscriptionsAddRequested event. */
export const MAX_CHUNK_ITEMS = 1000;
/** A chunk also stays within the size of the largest request the API accepts (1 MiB), so an import
 * appends nothing larger than a POST can. */
const MAX_CHUNK_BYTES = 1_000_000;

/** Consecutive runs of at most MAX_CHUNK_ITEMS feeds and about MAX_CHUNK_BYTES of JSON (a single
 * larger feed is a chunk of its own). */
export function chunksOf(feeds: readonly OpmlFeed[]): OpmlFeed[][] {
  const chunks: OpmlFeed[][] = [];
  let current: OpmlFeed[] = [];
  let bytes = 0;
  for (const feed of feeds) {
    // The item as the event holds it: `{"feedUrl":<url>,"candidateGuid":"<uuid>"},`.
    const size = Buffer.byteLength(JSON.stringify(feed.url)) + 72;
    if (current.length > 0 && (current.length === MAX_CHUNK_ITEMS || bytes + size > MAX_CHUNK_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(feed);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
