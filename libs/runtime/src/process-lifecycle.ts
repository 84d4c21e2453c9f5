import type { Server } from 'node:http';
import { Config, ConfigError, loadConfig } from '@castlog/config';

/** Reads the configuration, or prints what is wrong and exits 1. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Scaled apps need both the broker and the database. */
export function requireScaled(config: Config, app: string): void {
  const missing = (['KAFKA_BROKERS', 'DATABASE_URL'] as const).filter((name) => !config[name]);
  if (missing.length > 0) {
    process.stderr.write(
      `${app} runs in scaled mode and needs ${missing.join(' and ')} (see README: npm run infra:up); ` +
        `for everything in one process with nothing to install, run npm start\n`,
    );
    process.exit(1);
  }
}

/** Runs `stop` once on SIGINT or SIGTERM, then exits; exits 1 if it takes longer than the
 * timeout, or at a second signal. */
export function onShutdown(
  stop: () => Promise<void>,
  timeoutMs: number,
  log: (message: string) => void,
): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) {
      log(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    log(`${signal} received: shutting down`);
    const timer = setTimeout(() => {
      log(`shutdown took longer than ${timeoutMs} ms: exiting`);
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    stop().then(
      () => {
        log('stopped cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        log(`shutdown failed: ${String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
}

/** Stops in order: the HTTP server stops accepting and drains in-flight requests (the projector
 * still runs, so they can complete), then Nest destroys the modules (consumers finish their batch),
 * then the log, the pool and embedded PostgreSQL close. */
export async function closeGracefully(
  app: { getHttpAdapter(): { getInstance(): unknown }; close(): Promise<void> },
  runtime: { close(): Promise<void> },
  log: (message: string) => void = () => undefined,
): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance() as
    { close(): Promise<void>; server: Server } | undefined;
  if (fastify) {
    // A kept-alive connection whose last request finishes during the drain stays open until its
    // keep-alive timeout, holding close() up: close each connection as soon as it is idle.
    const closing = fastify.close();
    const idleSweep = setInterval(() => fastify.server.closeIdleConnections(), 100);
    try {
      await closing;
    } finally {
      clearInterval(idleSweep);
    }
  }
  log('HTTP drained');
  await app.close();
  log('consumers and saga stopped');
  await runtime.close();
}
