import 'reflect-metadata';
import { serve } from '@castlog/runtime';
import { ProjectorAppModule } from './projector-app.module';

/** The projector and the deletion saga; HTTP only for /health/* and /metrics. */
serve({
  name: 'castlog-projector',
  scaled: true,
  module: (runtime) => ProjectorAppModule.forRuntime(runtime),
  announce: (url, _runtime, logger) =>
    logger.info(`projector and deletion saga running; health and metrics on ${url}`),
});
