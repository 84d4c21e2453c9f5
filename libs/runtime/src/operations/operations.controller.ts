import { CONFIG, Config } from '@castlog/config';
import { DependencyHealth, messageOf } from '@castlog/supervision';
import { Controller, Get, Header, HttpException, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Metrics } from './metrics';
import { lagBetween, ProjectionStatus } from './projection-status';

/** How a 503 names a dependency that failed its check. */
const failure = (dependency: string, error: unknown) => `${dependency}: ${messageOf(error)}`;

const unavailable = (reason: string) =>
  new HttpException({ code: '503', message: `Service unavailable, retry later: ${reason}` }, 503);

/** How long readiness waits for each dependency: one that holds a connection open without
 * answering (a paused process, a network dropping packets) is unready, said well within a probe's
 * timeout rather than by the probe giving up. */
export const READINESS_CHECK_MS = 2_000;

const NO_ANSWER = `no answer within ${READINESS_CHECK_MS} ms`;

/** `check`'s result, or its failure: an error of its own, or one saying it took over
 * READINESS_CHECK_MS (`late` words it, at that moment). */
async function withinCheckTime<T>(check: () => Promise<T>, late = () => NO_ANSWER): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(late())), READINESS_CHECK_MS);
  });
  try {
    return await Promise.race([check(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** `check`'s result, or a 503 naming `dependency` when it fails or takes over READINESS_CHECK_MS. */
async function checked<T>(dependency: string, check: () => Promise<T>): Promise<T> {
  try {
    return await withinCheckTime(check);
  } catch (error) {
    throw unavailable(failure(dependency, error));
  }
}

/** Liveness, readiness and Prometheus metrics, outside /v1. */
@ApiExcludeController()
@Controller()
export class OperationsController {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly status: ProjectionStatus,
    private readonly metrics: Metrics,
    private readonly health: DependencyHealth,
  ) {}

  @Get('health/live')
  live() {
    return { status: 'ok' };
  }

  /** Ready when no supervised connection is out of reach, PostgreSQL and the event log answer (each
   * within READINESS_CHECK_MS), and the projection is less than READY_MAX_PROJECTION_LAG events
   * behind in every partition. */
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
    // Each dependency asked alone and both at once, so that a probe names each that fails (and only
    // those), in one check's time.
    const [applied, end] = await Promise.allSettled([
      this.readModelOffsets(),
      withinCheckTime(() => this.status.logEnd()),
    ]);
    if (applied.status === 'rejected' || end.status === 'rejected') {
      const failed = (dependency: string, result: PromiseSettledResult<unknown>) =>
        result.status === 'rejected' ? [failure(dependency, result.reason)] : [];
      throw unavailable([...failed('read model', applied), ...failed('event log', end)].join('; '));
    }
    const worst = Math.max(0, ...lagBetween(end.value, applied.value).values());
    if (worst > this.config.READY_MAX_PROJECTION_LAG) {
      throw unavailable(`projection is ${worst} events behind`);
    }
    return { status: 'ok', projection_version: this.status.versions()[0]?.version, projection_lag: worst };
  }

  /** The read model's stored offsets, within the check time. A check still waiting for a
   * connection then says so, with the pool's use, which tells a pool taken by the process's own
   * work from a PostgreSQL that does not answer. */
  private readModelOffsets(): Promise<Map<number, number>> {
    let connected = false;
    return withinCheckTime(
      () => this.status.applied(undefined, () => (connected = true)),
      () => {
        if (connected) return NO_ANSWER;
        const { size, inUse, waiting } = this.status.pool();
        return (
          `no connection within ${READINESS_CHECK_MS} ms ` +
          `(pool: ${inUse} of ${size} in use, ${waiting} ${waiting === 1 ? 'query' : 'queries'} waiting)`
        );
      },
    );
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async scrape(): Promise<string> {
    const versions = this.status.versions();
    const [deletions, ...lags] = await Promise.all([
      checked('read model', () => this.status.deletionsByStatus()).catch(() => new Map<string, number>()),
      ...versions.map(({ schema }) =>
        checked('event log', () => this.status.lag(schema)).catch(() => new Map<number, number>()),
      ),
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
