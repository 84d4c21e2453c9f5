import { CONFIG, Config } from '@castlog/config';
import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Unavailable } from '../errors';
import { OperationsReport } from './operations.report';

/** Liveness, readiness and Prometheus metrics, outside /v1. A process that is not ready answers
 * 503 with Retry-After and the error body, saying why. */
@ApiExcludeController()
@Controller()
export class OperationsController {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly report: OperationsReport,
  ) {}

  @Get('health/live')
  live() {
    return { status: 'ok' };
  }

  @Get('health/ready')
  async ready() {
    const readiness = await this.report.readiness();
    if (!readiness.ready) throw new Unavailable(this.config.RETRY_AFTER_SECONDS, readiness.reason);
    return {
      status: 'ok',
      projection_version: readiness.projectionVersion,
      projection_lag: readiness.projectionLag,
      ...(readiness.details?.length ? { details: readiness.details } : {}),
    };
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.report.metrics();
  }
}
