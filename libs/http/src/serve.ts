import {
  closeGracefully,
  OpenedRuntime,
  Runtime,
  createLogger,
  loadConfigOrExit,
  onShutdown,
  openRuntime,
  requireScaled,
  runtimeLog,
} from '@castlog/runtime';
import { DynamicModule } from '@nestjs/common';
import type { Logger } from 'pino';
import { createHttpApp, OpenApiDocument } from './create-http-app';

export interface ServeOptions {
  /** The process's name in logs and messages. */
  readonly name: string;
  /** Scaled apps refuse to start without KAFKA_BROKERS and DATABASE_URL. */
  readonly scaled: boolean;
  /** The OpenAPI document to serve, if any. */
  readonly openApi?: OpenApiDocument;
  readonly module: (runtime: Runtime) => DynamicModule;
  readonly announce: (url: string, runtime: OpenedRuntime, logger: Logger) => void;
}

/** The entry points' common life: configuration, logger, runtime, HTTP on HOST:PORT, and a
 * graceful stop on SIGINT/SIGTERM. Signals are handled from the start: one that comes while the app
 * is still starting (a container stopped during its boot, where PID 1 would ignore it) stops the
 * app as soon as it has started, within SHUTDOWN_TIMEOUT. Start-up failures print one line and
 * exit 1. */
export function serve(options: ServeOptions): void {
  const config = loadConfigOrExit();
  if (options.scaled) requireScaled(config, options.name);
  const logger = createLogger(config, options.name);
  let stop: () => Promise<void> = async () => undefined;
  const run = async () => {
    const runtime = await openRuntime(config, {
      log: runtimeLog(logger),
      fatal: (reason) => {
        logger.fatal({ context: 'runtime' }, `${reason}; stopping`);
        const exit = () => process.exit(1);
        setTimeout(exit, config.SHUTDOWN_TIMEOUT).unref();
        void stop().then(exit, exit);
      },
    });
    const app = await createHttpApp(options.module(runtime), config, logger, { openApi: options.openApi });
    stop = () => closeGracefully(app, runtime, (message) => logger.info(message));
    await app.listen({ port: config.PORT, host: config.HOST });
    options.announce((await app.getUrl()).replace('[::1]', 'localhost'), runtime, logger);
  };
  const started = run();
  onShutdown(
    () => started.then(() => stop()),
    config.SHUTDOWN_TIMEOUT,
    (message) => logger.info(message),
  );
  started.catch((error: unknown) => {
    process.stderr.write(
      `${options.name} failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
}
