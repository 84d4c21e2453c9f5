export * from './api.module';
export * from './http/create-http-app';
export * from './serve';
