export * from './metrics';
export * from './projection-status';
export * from './readiness';
