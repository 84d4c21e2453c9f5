import { Config } from '@castlog/config';
import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

/** One JSON line per entry on stdout, at LOG_LEVEL. */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name: string): Logger {
  return pino({ name, level: config.LOG_LEVEL, base: { pid: process.pid } });
}

/** Nest's start-up lines about each module and route: debug, not info. */
const BOOT_CHATTER = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory']);

/** Nest's logger interface over pino: Nest's context becomes the `context` field. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.write(context && BOOT_CHATTER.has(context) ? 'debug' : 'info', message, context);
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, ...(trace ? { trace } : {}) }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string) {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string) {
    this.write('trace', message, context);
  }
  fatal(message: unknown, context?: string) {
    this.write('fatal', message, context);
  }

  private write(level: 'info' | 'warn' | 'debug' | 'trace' | 'fatal', message: unknown, context?: string) {
    if (typeof message === 'object' && message !== null) this.logger[level]({ context, ...message });
    else this.logger[level]({ context }, String(message));
  }
}

/** The `log` callback openRuntime takes, onto pino. */
export const runtimeLog =
  (logger: Logger) =>
  (level: 'error' | 'warn' | 'info', message: string, extra?: object): void =>
    logger[level]({ context: 'runtime', ...extra }, message);
