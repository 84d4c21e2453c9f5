export * from './catalog/feed-catalog';
export * from './catalog/migrations/1732400000012-feed-catalog';
export { FeedFetcher } from './fetch/feed-fetcher';
export type { FetcherOptions, FetchResult, Validators } from './fetch/feed-fetcher';
export { FEED_TEXT_LIMITS, FeedParseError, parseFeed } from './parse/feed-parser';
export type { FeedInfo } from './parse/feed-parser';
export * from './resolver';
export * from './resolver-progress';
