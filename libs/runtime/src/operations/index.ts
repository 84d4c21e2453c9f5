export * from './metrics';
export * from './operations.module';
export * from './projection-status';
