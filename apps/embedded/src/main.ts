import 'reflect-metadata';
import { apiHttpOptions } from '@castlog/api';
import { DEFAULT_DATA_DIR } from '@castlog/config';
import { serve } from '@castlog/runtime';
import { performance } from 'node:perf_hooks';
import { EmbeddedAppModule } from './embedded-app.module';

/** `npm start`: API, projector and deletion saga in one process. */
serve({
  name: 'castlog',
  scaled: false,
  http: apiHttpOptions,
  module: (runtime) => EmbeddedAppModule.forRuntime(runtime),
  announce: (url, runtime, logger) => {
    const log = runtime.config.KAFKA_BROKERS
      ? `event log in Kafka at ${runtime.config.KAFKA_BROKERS}`
      : 'event log in its castlog_log.events table';
    const where =
      runtime.mode === 'embedded'
        ? `data in ${runtime.dataDir} (embedded PostgreSQL; ${log})`
        : 'data in DATABASE_URL';
    logger.info(`castlog ready in ${Math.round(performance.now())} ms at ${url}; ${where}`);
    // The CLI finds this data directory only if told, unless it is the default one.
    const dataDir = runtime.config.CASTLOG_DATA_DIR;
    const env =
      runtime.mode === 'embedded' && dataDir !== DEFAULT_DATA_DIR
        ? `CASTLOG_DATA_DIR='${dataDir.replaceAll("'", "'\\''")}' `
        : '';
    logger.info(
      'create a user and a token from another terminal: ' +
        `printf 'secret' | ${env}npm run castlog -- users add alice && ${env}npm run castlog -- tokens issue alice`,
    );
    logger.info(
      `then: curl -H "Authorization: Bearer <token>" ${url}/v1/subscriptions   (API docs: ${url}/docs)`,
    );
  },
});
