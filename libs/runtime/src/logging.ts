import { Config } from '@castlog/config';
import pino, { Logger } from 'pino';

/** One JSON line per entry on stdout, at LOG_LEVEL. */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name: string): Logger {
  return pino({ name, level: config.LOG_LEVEL, base: { pid: process.pid } });
}

/** The `log` callback openRuntime takes, onto pino. */
export const runtimeLog =
  (logger: Logger) =>
  (level: 'error' | 'warn' | 'info', message: string, extra?: object): void =>
    logger[level]({ context: 'runtime', ...extra }, message);
