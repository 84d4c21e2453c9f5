import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import {
  createLogger,
  loadConfigOrExit,
  onShutdown,
  openRuntime,
  PinoNestLogger,
  requireScaled,
  runtimeLog,
} from '@castlog/runtime';
import { ProjectorAppModule } from './projector-app.module';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  requireScaled(config, 'the projector app');
  const logger = createLogger(config, 'castlog-projector');
  const runtime = await openRuntime(config, runtimeLog(logger));
  const app = await NestFactory.createApplicationContext(ProjectorAppModule.forRuntime(runtime), {
    logger: new PinoNestLogger(logger),
  });
  await app.init();
  logger.info('projector and deletion saga running');
  onShutdown(
    async () => {
      await app.close();
      await runtime.close();
    },
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
