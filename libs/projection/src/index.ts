export * from './apply-batch';
export * from './batch-plan';
export * from './changes.sql';
export * from './state.loader';
