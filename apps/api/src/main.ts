import 'reflect-metadata';
import { ApiAppModule } from './api-app.module';
import { serve } from './serve';

serve({
  name: 'castlog-api',
  scaled: true,
  openApi: true,
  module: (runtime) => ApiAppModule.forRuntime(runtime),
  announce: (url, _runtime, logger) => logger.info(`API listening on ${url} (docs: ${url}/docs)`),
});
