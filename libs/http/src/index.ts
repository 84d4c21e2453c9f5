export * from './create-http-app';
export * from './error-body.filter';
export * from './errors';

export * from './route-options';
export * from './text-body';
export * from './form-body';
export * from './text';
export * from './nest-logger';
export * from './operations';
export * from './request-metrics';
export * from './stand-in.server';
