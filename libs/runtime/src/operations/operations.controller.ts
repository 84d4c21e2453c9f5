import { CONFIG, Config } from '@castlog/config';
import { Database } from '@castlog/read-model';
import { DependencyHealth } from '@castlog/supervision';
import { Controller, Get, Header, HttpException, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DATABASE } from '../tokens';
import { Metrics } from './metrics';
import { ProjectionStatus } from './projection-status';

const unavailable = (reason: string) =>
  new HttpException({ code: '503', message: `Service unavailable, retry later: ${reason}` }, 503);

/** Liveness, readiness and Prometheus metrics, outside /v1. */
@ApiExcludeController()
@Controller()
export class OperationsController {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(DATABASE) private readonly database: Database,
    private readonly status: ProjectionStatus,
    private readonly metrics: Metrics,
    private readonly health: DependencyHealth,
  ) {}

  @Get('health/live')
  live() {
    return { status: 'ok' };
  }

  /** Ready when no supervised connection is out of reach, PostgreSQL and the event log answer, and
   * the projection is less than READY_MAX_PROJECTION_LAG events behind in every partition. */
  @Get('health/ready')
  async ready() {
    const outages = this.health.current();
    if (outages.length > 0) {
      const now = Date.now();
      throw unavailable(
        outages
          .map(
            ({ component, since, reason }) =>
              `${component} down for ${Math.round((now - since) / 1000)} s (${reason})`,
          )
          .join('; '),
      );
    }
    try {
      await this.database.dataSource.query('SELECT 1');
    } catch (error) {
      throw unavailable(`read model: ${error instanceof Error ? error.message : String(error)}`);
    }
    let lag: Map<number, number>;
    try {
      lag = await this.status.lag();
    } catch (error) {
      throw unavailable(`event log: ${error instanceof Error ? error.message : String(error)}`);
    }
    const worst = Math.max(0, ...lag.values());
    if (worst > this.config.READY_MAX_PROJECTION_LAG) {
      throw unavailable(`projection is ${worst} events behind`);
    }
    return { status: 'ok', projection_version: this.status.versions()[0]?.version, projection_lag: worst };
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async scrape(): Promise<string> {
    const versions = this.status.versions();
    const [deletions, ...lags] = await Promise.all([
      this.status.deletionsByStatus().catch(() => new Map<string, number>()),
      ...versions.map(({ schema }) => this.status.lag(schema).catch(() => new Map<number, number>())),
    ]);
    this.metrics.projectorLag.reset();
    versions.forEach(({ version }, i) => {
      for (const [partition, value] of lags[i] ?? [])
        this.metrics.projectorLag.set({ version: String(version), partition: String(partition) }, value);
    });
    this.metrics.activeProjectionVersion.set(versions[0]?.version ?? 0);
    this.metrics.deletions.reset();
    for (const [status, value] of deletions) this.metrics.deletions.set({ status }, value);
    return this.metrics.registry.metrics();
  }
}
