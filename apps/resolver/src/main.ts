import 'reflect-metadata';
import { serve } from '@castlog/runtime';
import { ResolverAppModule } from './resolver-app.module';

/** The feed resolver alone (scaled mode); HTTP only for /health/* and /metrics. */
serve({
  name: 'castlog-resolver',
  scaled: true,
  module: (runtime) => ResolverAppModule.forRuntime(runtime),
  announce: (url, runtime, logger) =>
    logger.info(
      runtime.config.FEEDS
        ? `feed resolver running; health and metrics on ${url}`
        : `FEEDS is off: the feed resolver fetches nothing; health and metrics on ${url}`,
    ),
});
