export { OpmlError, parseOpml, toOpml, toPodcastsXml } from './opml';
export type { OpmlDocument, OpmlFeed, OpmlHead } from './opml';
