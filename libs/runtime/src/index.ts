export * from './tokens';
export * from './database';
export * from './runtime.module';
export * from './open-runtime';
export * from './process-lifecycle';
export * from './logging';
export * from './operations';
export * from './serve';
