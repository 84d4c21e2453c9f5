import { XMLParser } from 'fast-xml-parser';

/** Attributes are read under this prefix, so an attribute never collides with a child element. */
const ATTRIBUTE = '@_';

/** An element as fast-xml-parser gives it: children by name (an array when repeated), attributes
 * under `@_`, its own text under `#text` when it also has attributes or children. */
export type XmlNode = { readonly [name: string]: unknown };

/** Elements nested deeper are refused (fast-xml-parser's own default, stated): feeds nest a handful
 * of levels, and the limit bounds the tree a hostile document can build. */
const MAX_DEPTH = 100;

/** Parses well-formed XML into nodes, names in lower case (feeds differ in case: `pubDate`,
 * `pubdate`). Entities: the XML ones and numeric references always, the HTML names feeds write
 * (`&nbsp;`, `&rsquo;`) too, each decoded once (`&amp;lt;` stays `&lt;`). A DOCTYPE's internal
 * entities are bounded in number, size and the growth their expansion adds to the document, and
 * one referring to another is never expanded, so nesting cannot blow up; external entities are
 * refused and nothing is ever fetched. */
export const feedXmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: ATTRIBUTE,
  transformTagName: (name) => name.toLowerCase(),
  transformAttributeName: (name) => name.toLowerCase(),
  parseAttributeValue: false,
  parseTagValue: false,
  ignorePiTags: true,
  htmlEntities: true,
  processEntities: {
    enabled: true,
    maxEntityCount: 64,
    maxEntitySize: 1024,
    maxExpandedLength: 65_536,
  },
  maxNestedTags: MAX_DEPTH,
});

export function isNode(value: unknown): value is XmlNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The elements named by one of `names` under `node`, in the order of `names`, at most `limit`.
 * Callers reading a field's candidates pass a small limit: a hostile feed may repeat an element
 * hundreds of thousands of times, and each candidate costs work (and spreading them, a call's
 * argument count). */
export function childrenOf(node: XmlNode, names: readonly string[], limit = Infinity): unknown[] {
  let children: unknown[] = [];
  for (const name of names) {
    const value = node[name];
    if (value === undefined) continue;
    const room = limit - children.length;
    children = children.concat(Array.isArray(value) ? value.slice(0, room) : room > 0 ? [value] : []);
  }
  return children;
}

/** The first element named by one of `names` that is an element with children or attributes. */
export function childNode(node: XmlNode, names: readonly string[]): XmlNode | undefined {
  return childrenOf(node, names, MAX_CANDIDATES).find(isNode);
}

/** An attribute's value, or undefined. */
export function attributeOf(node: unknown, name: string): string | undefined {
  if (!isNode(node)) return undefined;
  const value = node[`${ATTRIBUTE}${name}`];
  return typeof value === 'string' ? value : undefined;
}

/** A field's candidates are the first this many elements that may hold it. */
export const MAX_CANDIDATES = 8;

/** The text of the first elements named by one of `names`, in order (see `textOf`). */
export function textsOf(node: XmlNode, names: readonly string[], maxLength: number): string[] {
  return childrenOf(node, names, MAX_CANDIDATES)
    .map((child) => textOf(child, maxLength))
    .filter((text): text is string => text !== undefined);
}

/** An element's text: its own, or with markup inside it (Atom's XHTML, unescaped HTML) the texts
 * of it and its descendants joined by spaces, by element (fast-xml-parser keeps no order between an
 * element's text and its children), collected only up to about `maxLength` characters. */
export function textOf(element: unknown, maxLength: number): string | undefined {
  if (typeof element === 'string') return element;
  if (!isNode(element)) return undefined;
  let text = '';
  // Depth first without recursion; children are pushed last first, so they pop in document order.
  const pending: unknown[] = [element];
  while (pending.length > 0 && text.length < maxLength) {
    const next = pending.pop();
    if (typeof next === 'string') text += `${text === '' ? '' : ' '}${next}`;
    else if (Array.isArray(next)) pushReversed(pending, next as unknown[]);
    else if (isNode(next)) {
      const children = Object.keys(next).filter((name) => !name.startsWith(ATTRIBUTE));
      pushReversed(
        pending,
        children.map((name) => next[name]),
      );
    }
  }
  return text === '' ? undefined : text;
}

function pushReversed(stack: unknown[], values: readonly unknown[]): void {
  for (let index = values.length - 1; index >= 0; index--) stack.push(values[index]);
}

/** A namespace castlog reads, by the URIs publishers bind it to and its usual prefix. */
export interface KnownNamespace {
  readonly prefix: string;
  /** Lower case, without the scheme: publishers write `http:` and `https:` alike. */
  readonly uris: readonly string[];
}

export const ITUNES: KnownNamespace = { prefix: 'itunes', uris: ['www.itunes.com/dtds/podcast-1.0.dtd'] };
export const PODCAST: KnownNamespace = {
  prefix: 'podcast',
  uris: [
    'podcastindex.org/namespace/1.0',
    'github.com/podcastindex-org/podcast-namespace/blob/main/docs/1.0.md',
  ],
};
export const ATOM: KnownNamespace = { prefix: 'atom', uris: ['www.w3.org/2005/atom'] };

/** The prefixes a document binds (on its root and, for RSS, its channel, where feeds declare them). */
export class Namespaces {
  private readonly prefixesByUri = new Map<string, string[]>();

  constructor(declaring: readonly XmlNode[]) {
    for (const node of declaring) {
      for (const [name, value] of Object.entries(node)) {
        if (!name.startsWith(`${ATTRIBUTE}xmlns:`) || typeof value !== 'string') continue;
        const uri = bareUri(value);
        const prefixes = this.prefixesByUri.get(uri) ?? [];
        prefixes.push(name.slice(`${ATTRIBUTE}xmlns:`.length));
        this.prefixesByUri.set(uri, prefixes);
      }
    }
  }

  /** The names `local` may have in `namespace`: its usual prefix, and any other bound to it. */
  names(namespace: KnownNamespace, local: string): string[] {
    const prefixes = new Set([namespace.prefix]);
    for (const uri of namespace.uris)
      for (const prefix of this.prefixesByUri.get(uri) ?? []) prefixes.add(prefix);
    return [...prefixes].map((prefix) => `${prefix}:${local}`);
  }
}

/** Lower case without the scheme and trailing slashes, so spellings of one URI compare equal. */
function bareUri(uri: string): string {
  return uri
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/\/+$/, '');
}
