export * from './catalog/feed-catalog';
export * from './catalog/migrations/1732400000012-feed-catalog';
