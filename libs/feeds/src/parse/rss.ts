import { FeedCandidates, MAX_TEXT_READ, newestOf } from './candidates';
import {
  ITUNES,
  MAX_CANDIDATES,
  Namespaces,
  PODCAST,
  XmlNode,
  attributeOf,
  childNode,
  childrenOf,
  isNode,
  textOf,
  textsOf,
} from './xml';

/** `editor@example.com (Jane Doe)`, as RSS writes `managingEditor`: the name is the part shown. */
const EDITOR_WITH_NAME = /^\S+@\S+\s*\((.+)\)$/;

/** Reads an RSS 2.0 `<channel>` (under `rss`, whose attributes and the channel's declare the
 * namespaces): its own elements, then the iTunes and podcast namespaces' where RSS has none. */
export function readRssChannel(rss: XmlNode, channel: XmlNode): FeedCandidates {
  const ns = new Namespaces([rss, channel]);
  const texts = (names: readonly string[]): string[] => textsOf(channel, names, MAX_TEXT_READ);
  const items = childrenOf(channel, ['item']);
  return {
    title: texts(['title', ...ns.names(ITUNES, 'title')]),
    description: texts(['description', ...ns.names(ITUNES, 'summary'), ...ns.names(ITUNES, 'subtitle')]),
    // An Atom `<link href>` written without a prefix is an element, not text: only text links count.
    link: childrenOf(channel, ['link'], MAX_CANDIDATES).filter(
      (link): link is string => typeof link === 'string',
    ),
    imageUrl: [...itunesImages(channel, ns), ...imageUrls(channel)],
    language: texts(['language']),
    author: [
      ...texts(ns.names(ITUNES, 'author')),
      ...texts(['managingeditor']).map((editor) => EDITOR_WITH_NAME.exec(editor.trim())?.[1] ?? editor),
    ],
    podcastGuid: texts(ns.names(PODCAST, 'guid')),
    newFeedUrl: texts(ns.names(ITUNES, 'new-feed-url')),
    episodeCount: items.length,
    newestEpisodeAt: newestOf(items.map((item) => (isNode(item) ? pubDateOf(item) : undefined))),
  };
}

/** `<itunes:image href="…"/>`, or the URL as its text, which some publishers write instead. */
function itunesImages(channel: XmlNode, ns: Namespaces): string[] {
  return childrenOf(channel, ns.names(ITUNES, 'image'), MAX_CANDIDATES)
    .map((image) => attributeOf(image, 'href') ?? textOf(image, MAX_TEXT_READ))
    .filter((url): url is string => url !== undefined);
}

/** RSS's `<image><url>…</url></image>`. */
function imageUrls(channel: XmlNode): string[] {
  const image = childNode(channel, ['image']);
  return image === undefined ? [] : textsOf(image, ['url'], MAX_TEXT_READ);
}

function pubDateOf(item: XmlNode): string | undefined {
  return textOf(childrenOf(item, ['pubdate'], 1)[0], MAX_TEXT_READ);
}
