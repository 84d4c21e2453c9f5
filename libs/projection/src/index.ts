export * from './apply-batch';
export * from './changes.sql';
export * from './state.loader';
