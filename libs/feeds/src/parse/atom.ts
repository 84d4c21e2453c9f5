import { FeedCandidates, MAX_TEXT_READ, newestOf } from './candidates';
import {
  ATOM,
  ITUNES,
  MAX_CANDIDATES,
  Namespaces,
  PODCAST,
  XmlNode,
  attributeOf,
  childrenOf,
  isNode,
  textOf,
  textsOf,
} from './xml';

/** Reads an Atom `<feed>` (the root, which declares the namespaces). Atom's own elements are read
 * unprefixed (its default namespace) or under any prefix bound to Atom's URI. */
export function readAtomFeed(feed: XmlNode): FeedCandidates {
  const ns = new Namespaces([feed]);
  const atom = (local: string): string[] => atomNames(ns, local);
  const texts = (names: readonly string[]): string[] => textsOf(feed, names, MAX_TEXT_READ);
  const entries = childrenOf(feed, atom('entry'));
  return {
    title: texts([...atom('title'), ...itunes(ns, 'title')]),
    description: texts([...atom('subtitle'), ...itunes(ns, 'summary'), ...itunes(ns, 'subtitle')]),
    link: alternateLinks(feed, atom('link')),
    imageUrl: [
      ...childrenOf(feed, itunes(ns, 'image'), MAX_CANDIDATES)
        .map((image) => attributeOf(image, 'href'))
        .filter((href): href is string => href !== undefined),
      ...texts([...atom('logo'), ...atom('icon')]),
    ],
    language: [attributeOf(feed, 'xml:lang')].filter((lang): lang is string => lang !== undefined),
    author: [...texts(itunes(ns, 'author')), ...authorNames(feed, atom)],
    podcastGuid: texts(ns.names(PODCAST, 'guid')),
    newFeedUrl: texts(itunes(ns, 'new-feed-url')),
    episodeCount: entries.length,
    // An entry's `updated` changes with any edit; `published` is when the episode came out.
    newestEpisodeAt: newestOf(
      entries.map((entry) =>
        isNode(entry) ? firstText(entry, [...atom('published'), ...atom('updated')]) : undefined,
      ),
    ),
  };
}

function atomNames(ns: Namespaces, local: string): string[] {
  return [local, ...ns.names(ATOM, local)];
}

function itunes(ns: Namespaces, local: string): string[] {
  return ns.names(ITUNES, local);
}

/** The `href` of each `<link>` whose `rel` is `alternate` (or missing, which means it). */
function alternateLinks(feed: XmlNode, names: readonly string[]): string[] {
  return childrenOf(feed, names, MAX_CANDIDATES)
    .filter((link) => (attributeOf(link, 'rel') ?? 'alternate').trim().toLowerCase() === 'alternate')
    .map((link) => attributeOf(link, 'href'))
    .filter((href): href is string => href !== undefined);
}

/** `<author><name>…</name></author>`, each author's name. */
function authorNames(feed: XmlNode, atom: (local: string) => string[]): string[] {
  return childrenOf(feed, atom('author'), MAX_CANDIDATES)
    .filter(isNode)
    .map((author) => firstText(author, atom('name')))
    .filter((name): name is string => name !== undefined);
}

/** The text of the first element named by one of `names`, in the order of `names`. */
function firstText(node: XmlNode, names: readonly string[]): string | undefined {
  return textOf(childrenOf(node, names, 1)[0], MAX_TEXT_READ);
}
