import { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';

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
