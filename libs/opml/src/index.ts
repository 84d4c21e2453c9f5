export { chunksOf, MAX_CHUNK_ITEMS, OpmlError, parseOpml, toOpml, toPodcastsXml } from './opml';
export type { OpmlDocument, OpmlFeed, OpmlHead } from './opml';
