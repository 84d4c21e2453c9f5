export * from './apply-batch';
export * from './changes.sql';
export * from './checkpoint.store';
export * from './state.loader';
export * from './sql';
