import 'reflect-metadata';
import { createHttpApp } from '@castlog/api';
import {
  closeGracefully,
  createLogger,
  loadConfigOrExit,
  onShutdown,
  openRuntime,
  requireScaled,
  runtimeLog,
} from '@castlog/runtime';
import { ProjectorAppModule } from './projector-app.module';

/** The projector and the deletion saga; HTTP only for /health/* and /metrics (PORT). */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  requireScaled(config, 'the projector app');
  const logger = createLogger(config, 'castlog-projector');
  const runtime = await openRuntime(config, runtimeLog(logger));
  const app = await createHttpApp(ProjectorAppModule.forRuntime(runtime), config, logger, { openApi: false });
  await app.listen({ port: config.PORT, host: config.HOST });
  logger.info(`projector and deletion saga running; health and metrics on ${await app.getUrl()}`);
  onShutdown(
    () => closeGracefully(app, runtime),
    config.SHUTDOWN_TIMEOUT,
    (message) => logger.info(message),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `castlog-projector failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
