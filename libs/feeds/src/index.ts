export { FeedFetcher } from './fetch/feed-fetcher';
export type { FetcherOptions, FetchResult, Validators } from './fetch/feed-fetcher';
