import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadConfigOrExit, onShutdown, openRuntime, requireScaled } from '@castlog/runtime';
import { ApiAppModule } from './api-app.module';
import { createHttpApp } from './http/create-http-app';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  requireScaled(config, 'the API app');
  const logger = new Logger('castlog-api');
  const runtime = await openRuntime(config, (level, message) => logger[level === 'info' ? 'log' : level](message));
  const app = await createHttpApp(ApiAppModule.forRuntime(runtime), config);
  await app.listen({ port: config.PORT, host: config.HOST });
  logger.log(`API listening on ${await app.getUrl()}`);
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
  process.stderr.write(`castlog-api failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
