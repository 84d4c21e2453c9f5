import 'reflect-metadata';
import { serve } from '@castlog/runtime';
import { ApiAppModule } from './api-app.module';
import { apiHttpOptions } from './http/api-document';

serve({
  name: 'castlog-api',
  scaled: true,
  http: apiHttpOptions,
  module: (runtime) => ApiAppModule.forRuntime(runtime),
  announce: (url, _runtime, logger) => logger.info(`API listening on ${url} (docs: ${url}/docs)`),
});
