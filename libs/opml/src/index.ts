export { OpmlError, parseOpml, toOpml } from './opml';
export type { OpmlDocument, OpmlFeed, OpmlHead } from './opml';
