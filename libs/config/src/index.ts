export * from './config';
export * from './config.token';
