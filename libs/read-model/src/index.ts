export * from './data-source';
export * from './migrations/read-model.migration';
export * from './queries/subscriptions.query';
export * from './queries/deletions.query';
export * from './queries/outcomes.query';
