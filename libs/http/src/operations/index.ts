export * from './operations.controller';
export * from './operations.module';
export * from './operations.report';
