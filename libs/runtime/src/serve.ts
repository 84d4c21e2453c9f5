import type { Config } from '@castlog/config';
import { createHttpApp, HttpAppOptions, listenAsStandIn, StandIn } from '@castlog/http';
import { isUnavailableError, messageOf, retry } from '@castlog/supervision';
import { DynamicModule, INestApplication } from '@nestjs/common';
import type { Logger } from 'pino';
import { createLogger, runtimeLog } from './logging';
import { OpenedRuntime, openRuntime, startDatabaseServer } from './open-runtime';
import { closeGracefully, loadConfigOrExit, onShutdown, requireScaled } from './process-lifecycle';
import { Runtime } from './runtime.module';

export interface ServeOptions {
  /** The process's name in logs and messages. */
  readonly name: string;
  /** Scaled apps refuse to start without KAFKA_BROKERS and DATABASE_URL. */
  readonly scaled: boolean;
  /** What the HTTP app serves beside the module's routes (the OpenAPI document, CORS), if anything. */
  readonly http?: (config: Config) => HttpAppOptions;
  readonly module: (runtime: Runtime) => DynamicModule;
  readonly announce: (url: string, runtime: OpenedRuntime, logger: Logger) => void;
}

/** The entry points' common life: configuration, logger, runtime, HTTP on HOST:PORT, and a
 * graceful stop on SIGINT/SIGTERM. A dependency out of reach at start-up is waited for
 * (`openWhenReachable`). Signals are handled from the start: one that comes while the app is still
 * starting (a container stopped during its boot, where PID 1 would ignore it) stops the app as
 * soon as it has started, within SHUTDOWN_TIMEOUT, or ends the wait for a dependency. Other
 * start-up failures print one line and exit 1. */
export function serve(options: ServeOptions): void {
  const config = loadConfigOrExit();
  if (options.scaled) requireScaled(config, options.name);
  const logger = createLogger(config, options.name);
  const stopping = new AbortController();
  const life: Stopper = { stop: async () => undefined };
  const started = start(options, config, logger, stopping.signal, life);
  onShutdown(
    () => {
      stopping.abort();
      return started.then(() => life.stop());
    },
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

/** How the process stops what it has started: nothing until the app is up. */
interface Stopper {
  stop: () => Promise<void>;
}

/** Starts the database server, the runtime (waiting while a dependency is out of reach, until
 * `stopping`) and the HTTP app; what fails on the way closes what is already open. */
async function start(
  options: ServeOptions,
  config: Config,
  logger: Logger,
  stopping: AbortSignal,
  life: Stopper,
): Promise<void> {
  const runtimeOptions = { log: runtimeLog(logger), fatal: stopOnFatal(config, logger, life) };
  // Started once: embedded PostgreSQL keeps running while the rest waits for Kafka.
  const server = await startDatabaseServer(config, runtimeOptions);
  const reachable = await openWhenReachable(() => openRuntime(config, { ...runtimeOptions, server }), {
    host: config.HOST,
    port: config.PORT,
    retryAfterSeconds: config.RETRY_AFTER_SECONDS,
    signal: stopping,
    log: (message) => logger.warn({ context: 'runtime' }, message),
  }).catch(async (error: unknown) => {
    await server.close();
    throw error;
  });
  if (reachable === undefined) return server.close();
  const { opened: runtime, standIn } = reachable;
  // A failure from here on (a port in use) closes what is open, embedded PostgreSQL included.
  const app = await createHttpApp(options.module(runtime), config, logger, options.http?.(config)).catch(
    async (error: unknown) => {
      await runtime.close();
      throw error;
    },
  );
  life.stop = () => closeGracefully(app, runtime, (message) => logger.info(message));
  try {
    await listenBehindStandIn(app, standIn, {
      host: config.HOST,
      port: config.PORT,
      retryAfterSeconds: config.RETRY_AFTER_SECONDS,
    });
  } catch (error) {
    await life.stop();
    throw error;
  }
  options.announce((await app.getUrl()).replace('[::1]', 'localhost'), runtime, logger);
}

/** A fault the runtime cannot recover from (embedded PostgreSQL that will not restart): stop what
 * runs and exit 1, at the latest after SHUTDOWN_TIMEOUT. */
const stopOnFatal =
  (config: Config, logger: Logger, life: Stopper) =>
  (reason: string): void => {
    logger.fatal({ context: 'runtime' }, `${reason}; stopping`);
    const exit = () => process.exit(1);
    setTimeout(exit, config.SHUTDOWN_TIMEOUT).unref();
    void life.stop().then(exit, exit);
  };

/** Runs `app`'s start-up hooks, then listens on HOST:PORT, with a stand-in answering there until it
 * does (`standIn`, the one that answered while a dependency was out of reach, or a new one): the
 * hooks can take a while, as a projector restarted at once joins its consumer groups only once
 * Kafka has dropped its previous member (up to KAFKA_SESSION_TIMEOUT), and meanwhile `/health/live`
 * answers 200 and everything else 503 with Retry-After rather than a refused connection. */
export async function listenBehindStandIn(
  app: INestApplication,
  standIn: StandIn | undefined,
  options: { readonly host: string; readonly port: number; readonly retryAfterSeconds: number },
): Promise<void> {
  const cover =
    standIn ?? (await listenAsStandIn(options.host, options.port, options.retryAfterSeconds, STARTING));
  cover.setReason(STARTING);
  try {
    await app.init();
  } finally {
    await cover.close();
  }
  await app.listen(cover.port, options.host);
}

const STARTING = 'the process is starting (joining the event log, starting consumers)';

/** Opens what `open` opens; while that fails because a dependency is out of reach
 * (`isUnavailableError`: PostgreSQL or Kafka refusing, restarting, not yet resolvable), tries again
 * with capped backoff, logging each failure, and meanwhile a stand-in on HOST:PORT answers 503 with
 * Retry-After (`listenAsStandIn`): no castlog process exits because a dependency is down when it
 * starts. Any other failure (a wrong password, a failed migration) is final. Answers the opened
 * value and the stand-in, which the caller closes just before listening on its port; or undefined
 * when `signal` aborts first, having closed whatever was opened: an attempt under way then is not
 * waited for (a broker out of reach holds one for its client's retries, about 10 s), and what it
 * opens after all is closed as soon as it has. */
export async function openWhenReachable<T extends { close(): Promise<void> }>(
  open: () => Promise<T>,
  options: {
    readonly host: string;
    readonly port: number;
    readonly retryAfterSeconds: number;
    readonly signal: AbortSignal;
    readonly log: (message: string) => void;
    /** The first wait and the longest (500 ms and 5 s unless given). */
    readonly initialMs?: number;
    readonly maxMs?: number;
  },
): Promise<{ opened: T; standIn?: StandIn } | undefined> {
  let standIn: StandIn | undefined;
  try {
    const opened = await retry(() => abandonedOnAbort(open(), options.signal), {
      initialMs: options.initialMs ?? 500,
      maxMs: options.maxMs ?? 5_000,
      signal: options.signal,
      retryable: isUnavailableError,
      onFailure: async (error, _failures, delayMs) => {
        const reason = messageOf(error);
        if (standIn === undefined) {
          standIn = await listenAsStandIn(options.host, options.port, options.retryAfterSeconds, reason);
          options.log(
            `cannot start yet, a dependency is out of reach; answering 503 on ` +
              `http://${options.host}:${standIn.port} until it is back`,
          );
        } else standIn.setReason(reason);
        options.log(`out of reach: ${reason}; trying again in ${(delayMs / 1000).toFixed(1)} s`);
      },
    });
    if (opened !== undefined && !options.signal.aborted) return { opened, standIn };
    await opened?.close();
  } catch (error) {
    await standIn?.close();
    throw error;
  }
  await standIn?.close();
  return undefined;
}

/** `attempt`'s value, or undefined as soon as `signal` aborts; a value that comes after that is
 * closed. */
function abandonedOnAbort<T extends { close(): Promise<void> }>(
  attempt: Promise<T>,
  signal: AbortSignal,
): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve, reject) => {
    const abandon = () => {
      attempt.then((late) => late.close()).catch(() => undefined);
      resolve(undefined);
    };
    if (signal.aborted) return abandon();
    signal.addEventListener('abort', abandon, { once: true });
    attempt.then(
      (value) => {
        signal.removeEventListener('abort', abandon);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abandon);
        reject(error);
      },
    );
  });
}
