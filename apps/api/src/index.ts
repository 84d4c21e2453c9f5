export * from './api.module';
export * from './api-app.module';
export * from './http/api-document';
