import 'reflect-metadata';
import { createHttpApp } from '@castlog/api';
import {
  closeGracefully,
  createLogger,
  loadConfigOrExit,
  onShutdown,
  openRuntime,
  runtimeLog,
} from '@castlog/runtime';
import { performance } from 'node:perf_hooks';
import { EmbeddedAppModule } from './embedded-app.module';

async function main(): Promise<void> {
  const started = performance.now();
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'castlog');
  const runtime = await openRuntime(config, runtimeLog(logger));
  const app = await createHttpApp(EmbeddedAppModule.forRuntime(runtime), config, logger);
  await app.listen({ port: config.PORT, host: config.HOST });
  const url = (await app.getUrl()).replace('[::1]', 'localhost');
  const where =
    runtime.mode === 'embedded'
      ? `data in ${runtime.dataDir} (embedded PostgreSQL; event log in its castlog_log.events table)`
      : 'data in DATABASE_URL';
  logger.info(`castlog ready in ${Math.round(performance.now() - started)} ms at ${url}; ${where}`);
  logger.info(
    'create a user and a token from another terminal: ' +
      "printf 'secret' | npm run castlog -- users add alice && npm run castlog -- tokens issue alice",
  );
  logger.info(
    `then: curl -H "Authorization: Bearer <token>" ${url}/v1/subscriptions   (API docs: ${url}/docs)`,
  );
  onShutdown(
    () => closeGracefully(app, runtime),
    config.SHUTDOWN_TIMEOUT,
    (message) => logger.info(message),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `castlog failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
