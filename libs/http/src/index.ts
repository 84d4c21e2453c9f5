export * from './create-http-app';
export * from './error-body.filter';
export * from './errors';
export * from './serve';
export * from './route-options';
export * from './text-body';
