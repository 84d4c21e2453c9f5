export * from './catalog/feed-catalog';
export * from './catalog/migrations/1732400000012-feed-catalog';
export { FeedFetcher } from './fetch/feed-fetcher';
export type { FetcherOptions, FetchResult, Validators } from './fetch/feed-fetcher';
