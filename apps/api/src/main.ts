import 'reflect-metadata';
import {
  closeGracefully,
  createLogger,
  loadConfigOrExit,
  onShutdown,
  openRuntime,
  requireScaled,
  runtimeLog,
} from '@castlog/runtime';
import { ApiAppModule } from './api-app.module';
import { createHttpApp } from './http/create-http-app';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  requireScaled(config, 'the API app');
  const logger = createLogger(config, 'castlog-api');
  const runtime = await openRuntime(config, runtimeLog(logger));
  const app = await createHttpApp(ApiAppModule.forRuntime(runtime), config, logger);
  await app.listen({ port: config.PORT, host: config.HOST });
  logger.info(`API listening on ${await app.getUrl()}`);
  onShutdown(
    () => closeGracefully(app, runtime),
    config.SHUTDOWN_TIMEOUT,
    (message) => logger.info(message),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `castlog-api failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
