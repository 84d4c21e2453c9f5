export * from './resolver.module';
export * from './resolver-app.module';
