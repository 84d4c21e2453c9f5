import { XMLValidator } from 'fast-xml-parser';
import { checkFeedUrl, isGuid, normalizeGuid } from '@castlog/domain';
import { readAtomFeed } from './atom';
import { FeedCandidates } from './candidates';
import { decodeFeed } from './decode';
import { readRssChannel } from './rss';
import { ATOM, Namespaces, XmlNode, childNode, feedXmlParser, isNode } from './xml';

/** What castlog keeps of a feed: its podcast's description and its episodes' count and newest date.
 * A field is absent when the feed has none that passes castlog's rules (`parseFeed`). */
export interface FeedInfo {
  readonly title?: string;
  readonly description?: string;
  readonly link?: string;
  readonly imageUrl?: string;
  readonly language?: string;
  readonly author?: string;
  /** The podcast namespace's `<podcast:guid>`, lower case, when it is a UUID. */
  readonly podcastGuid?: string;
  readonly episodeCount: number;
  readonly newestEpisodeAt?: Date;
  /** `<itunes:new-feed-url>`: where the publisher says the feed has moved. */
  readonly newFeedUrl?: string;
}

/** The body is not a feed castlog can read; the message says what is wrong with it. */
export class FeedParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeedParseError';
  }
}

/** The longest each text field is kept (a description's HTML stays, as text, cut to its bound). */
export const FEED_TEXT_LIMITS = {
  title: 1_000,
  description: 4_000,
  author: 1_000,
  language: 35,
} as const;

/** A language tag as feeds write it: `en`, `en-us`, `pt_BR`. */
const LANGUAGE = /^[a-z]{2,8}(?:[-_][a-z0-9]{1,8})*$/i;

/** How far into a document an HTML page's start is looked for. */
const HTML_SNIFF_CHARS = 4_096;

/** Reads an RSS 2.0 or Atom feed, with the iTunes and podcast namespaces' tags, from its bytes as
 * fetched (`contentType` is the response's Content-Type; its charset counts, see `decodeFeed`).
 * Texts are trimmed and bounded (`FEED_TEXT_LIMITS`; titles and authors on one line); URLs are
 * kept only when absolute http(s), as a feed_url must be; the newest episode date is the latest
 * `pubDate` (Atom: `published`, else `updated`) that parses. Throws `FeedParseError` for an empty
 * body, a document that is not well-formed XML, and one that is not a feed (an HTML page, OPML). */
export function parseFeed(body: Uint8Array, contentType?: string): FeedInfo {
  const text = decodeFeed(body, contentType).trimStart();
  if (text === '') throw new FeedParseError('Not a feed: the body is empty.');
  if (startsAsHtml(text.slice(0, HTML_SNIFF_CHARS))) {
    throw new FeedParseError('Not a feed: the document is an HTML page.');
  }
  return infoOf(readFeed(parseXml(text)));
}

/** `<!DOCTYPE html` or `<html` comes first, after processing instructions and comments. Checked
 * before the XML, so that a page (rarely well-formed XML) is named as what it is. */
function startsAsHtml(head: string): boolean {
  let rest = head.trimStart();
  for (;;) {
    const close = rest.startsWith('<?') ? '?>' : rest.startsWith('<!--') ? '-->' : undefined;
    if (close === undefined) break;
    const end = rest.indexOf(close);
    if (end < 0) return false;
    rest = rest.slice(end + close.length).trimStart();
  }
  return /^<(?:!doctype\s+html\b|html\b)/i.test(rest);
}

function parseXml(text: string): XmlNode {
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw new FeedParseError(`Not a feed: the XML is not well-formed at line ${line}, column ${col}: ${msg}`);
  }
  try {
    return feedXmlParser.parse(text) as XmlNode;
  } catch (error) {
    throw new FeedParseError(`Not a feed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The candidates of the format the root element names. */
function readFeed(document: XmlNode): FeedCandidates {
  const rootName = Object.keys(document).find((name) => !name.startsWith('?'));
  const root = rootName === undefined ? undefined : document[rootName];
  if (rootName === 'rss') {
    const channel = isNode(root) ? childNode(root, ['channel']) : undefined;
    if (channel === undefined) throw new FeedParseError('Not a feed: <rss> has no <channel>.');
    return readRssChannel(root as XmlNode, channel);
  }
  if (rootName !== undefined && isAtomRoot(rootName, root)) return readAtomFeed(isNode(root) ? root : {});
  throw new FeedParseError(`Not a feed: ${describeRoot(rootName)}`);
}

/** `<feed>` (Atom as its default namespace, or undeclared), or `<x:feed>` with x bound to Atom. */
function isAtomRoot(rootName: string, root: unknown): boolean {
  return (
    rootName === 'feed' || (isNode(root) && new Namespaces([root]).names(ATOM, 'feed').includes(rootName))
  );
}

function describeRoot(rootName: string | undefined): string {
  switch (rootName) {
    case undefined:
      return 'the document has no root element.';
    case 'opml':
      return 'the document is an OPML subscription list, not RSS or Atom.';
    case 'html':
      return 'the document is an HTML page.';
    case 'rdf:rdf':
      return 'the document is RSS 1.0 (RDF), which castlog does not read; RSS 2.0 and Atom are read.';
    default:
      return `the root element is <${rootName}>, not RSS's <rss> or Atom's <feed>.`;
  }
}

/** The first candidate of each field that passes its rule; fields none passes are left out. */
function infoOf(found: FeedCandidates): FeedInfo {
  return withoutUndefined({
    title: firstOf(found.title, (text) => oneLine(text, FEED_TEXT_LIMITS.title)),
    description: firstOf(found.description, (text) => bounded(text.trim(), FEED_TEXT_LIMITS.description)),
    link: firstOf(found.link, absoluteUrl),
    imageUrl: firstOf(found.imageUrl, absoluteUrl),
    language: firstOf(found.language, languageTag),
    author: firstOf(found.author, (text) => oneLine(text, FEED_TEXT_LIMITS.author)),
    podcastGuid: firstOf(found.podcastGuid, podcastGuid),
    episodeCount: found.episodeCount,
    newestEpisodeAt: found.newestEpisodeAt,
    newFeedUrl: firstOf(found.newFeedUrl, absoluteUrl),
  });
}

function withoutUndefined<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as T;
}

/** The first non-empty result of `rule` over the candidates. */
function firstOf(
  candidates: readonly string[],
  rule: (text: string) => string | undefined,
): string | undefined {
  for (const candidate of candidates) {
    const kept = rule(candidate);
    if (kept !== undefined && kept !== '') return kept;
  }
  return undefined;
}

/** Control characters and runs of white space, which a one-line text keeps as one space. */
// eslint-disable-next-line no-control-regex
const SPACES_AND_CONTROLS = /[\s\u0000-\u001f\u007f]+/g;

/** White space (line breaks too) and control characters made one space, trimmed, bounded. */
function oneLine(text: string, limit: number): string {
  return bounded(text.replace(SPACES_AND_CONTROLS, ' ').trim(), limit);
}

/** At most `limit` UTF-16 units, never ending in half a surrogate pair. */
function bounded(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const cut = text.slice(0, limit);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** The URL as the feed writes it (trimmed), when it is absolute http(s) and would be a valid feed_url. */
function absoluteUrl(text: string): string | undefined {
  const check = checkFeedUrl(text.trim());
  return check.ok ? check.feedUrl : undefined;
}

function languageTag(text: string): string | undefined {
  const tag = text.trim();
  return tag.length <= FEED_TEXT_LIMITS.language && LANGUAGE.test(tag) ? tag : undefined;
}

function podcastGuid(text: string): string | undefined {
  const guid = text.trim();
  return isGuid(guid) ? normalizeGuid(guid) : undefined;
}
