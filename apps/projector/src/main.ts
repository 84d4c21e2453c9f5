import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfigOrExit, onShutdown, openRuntime, requireScaled } from '@castlog/runtime';
import { ProjectorAppModule } from './projector-app.module';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  requireScaled(config, 'the projector app');
  const logger = new Logger('castlog-projector');
  const runtime = await openRuntime(config, (level, message) => logger[level === 'info' ? 'log' : level](message));
  const app = await NestFactory.createApplicationContext(ProjectorAppModule.forRuntime(runtime));
  await app.init();
  logger.log('projector and deletion saga running');
  onShutdown(
    async () => {
      await app.close();
      await runtime.close();
    },
    config.SHUTDOWN_TIMEOUT,
    (message) => logger.log(message),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`castlog-projector failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
