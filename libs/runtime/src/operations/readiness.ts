import { CONFIG, Config } from '@castlog/config';
import { ResolverProgress } from '@castlog/feeds';
import { OperationsReport, Readiness } from '@castlog/http';
import { DependencyHealth, messageOf } from '@castlog/supervision';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Metrics } from './metrics';
import { lagBetween, ProjectionStatus } from './projection-status';

/** How long readiness waits for each dependency: one that holds a connection open without
 * answering (a paused process, a network dropping packets) is unready, said well within a probe's
 * timeout rather than by the probe giving up. */
export const READINESS_CHECK_MS = 2_000;

const NO_ANSWER = `no answer within ${READINESS_CHECK_MS} ms`;

/** The time readiness reads: the current time, and a wait that rejects when it elapses. Tests give
 * one they advance themselves. */
export interface CheckClock {
  now(): number;
  /** Rejects with `late()`'s message after `ms`, unless cancelled first. */
  deadline(ms: number, late: () => string): { readonly elapsed: Promise<never>; cancel(): void };
}

export const CHECK_CLOCK = Symbol('CHECK_CLOCK');

export const SYSTEM_CLOCK: CheckClock = {
  now: () => Date.now(),
  deadline: (ms, late) => {
    let timer: NodeJS.Timeout | undefined;
    const elapsed = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(late())), ms);
    });
    return { elapsed, cancel: () => clearTimeout(timer) };
  },
};

/** How long the feed resolver may go without a fetch ending while feeds are due before readiness
 * says it looks stuck: longer than a few fetches that each take their whole timeout. */
export const resolverStuckAfterMs = (config: Config): number =>
  Math.max(300_000, 3 * config.FEED_FETCH_TIMEOUT);

/** How a 503 names a dependency that failed its check. */
const failure = (dependency: string, error: unknown) => `${dependency}: ${messageOf(error)}`;

/** Readiness and the metrics' scrape, from the process's runtime: what the operations routes
 * report. */
@Injectable()
export class ProcessReport implements OperationsReport {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly status: ProjectionStatus,
    private readonly prometheus: Metrics,
    private readonly health: DependencyHealth,
    @Optional() @Inject(CHECK_CLOCK) private readonly clock: CheckClock = SYSTEM_CLOCK,
    @Optional() private readonly feeds: ResolverProgress = new ResolverProgress(),
  ) {}

  /** Ready when no supervised connection is out of reach, PostgreSQL and the event log answer (each
   * within READINESS_CHECK_MS), and the projection is less than READY_MAX_PROJECTION_LAG events
   * behind in every partition. A feed resolver that looks stuck adds a line to the details, and
   * leaves the process ready: the API serves without it. */
  async readiness(): Promise<Readiness> {
    const outages = this.health.current();
    if (outages.length > 0) {
      const now = this.clock.now();
      const reason = outages
        .map(
          ({ component, since, reason }) =>
            `${component} down for ${Math.round((now - since) / 1000)} s (${reason})`,
        )
        .join('; ');
      return { ready: false, reason };
    }
    // Each dependency asked alone and both at once, so that a probe names each that fails (and only
    // those), in one check's time.
    const [applied, end] = await Promise.allSettled([
      this.readModelOffsets(),
      this.withinCheckTime(() => this.status.logEnd()),
    ]);
    if (applied.status === 'rejected' || end.status === 'rejected') {
      const failed = (dependency: string, result: PromiseSettledResult<unknown>) =>
        result.status === 'rejected' ? [failure(dependency, result.reason)] : [];
      return {
        ready: false,
        reason: [...failed('read model', applied), ...failed('event log', end)].join('; '),
      };
    }
    const worst = Math.max(0, ...lagBetween(end.value, applied.value).values());
    if (worst > this.config.READY_MAX_PROJECTION_LAG)
      return { ready: false, reason: `projection is ${worst} events behind` };
    const stuck = this.feeds.stuck(this.clock.now(), resolverStuckAfterMs(this.config));
    return {
      ready: true,
      projectionVersion: this.status.versions()[0]?.version,
      projectionLag: worst,
      ...(stuck ? { details: [stuck] } : {}),
    };
  }

  /** The registry's exposition, with the projection lag, version and deletions measured now (a
   * dependency that fails its check leaves its figures empty for this scrape). */
  async metrics(): Promise<string> {
    const versions = this.status.versions();
    const [deletions, ...lags] = await Promise.all([
      this.withinCheckTime(() => this.status.deletionsByStatus()).catch(() => new Map<string, number>()),
      ...versions.map(({ schema }) =>
        this.withinCheckTime(() => this.status.lag(schema)).catch(() => new Map<number, number>()),
      ),
    ]);
    const metrics = this.prometheus;
    metrics.projectorLag.reset();
    versions.forEach(({ version }, i) => {
      for (const [partition, value] of lags[i] ?? [])
        metrics.projectorLag.set({ version: String(version), partition: String(partition) }, value);
    });
    metrics.activeProjectionVersion.set(versions[0]?.version ?? 0);
    metrics.deletions.reset();
    for (const [status, value] of deletions) metrics.deletions.set({ status }, value);
    const feeds = this.feeds.current();
    if (feeds) {
      metrics.feedsKnown.set(feeds.known);
      metrics.oldestDueFetch.set(
        feeds.oldestDueMs === null ? 0 : Math.max(0, (this.clock.now() - feeds.oldestDueMs) / 1000),
      );
    }
    return metrics.registry.metrics();
  }

  /** The read model's stored offsets, within the check time. A check still waiting for a
   * connection then says so, with the pool's use, which tells a pool taken by the process's own
   * work from a PostgreSQL that does not answer. */
  private readModelOffsets(): Promise<Map<number, number>> {
    let connected = false;
    return this.withinCheckTime(
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

  /** `check`'s result, or its failure: an error of its own, or one saying it took over
   * READINESS_CHECK_MS (`late` words it, at that moment). */
  private async withinCheckTime<T>(check: () => Promise<T>, late = () => NO_ANSWER): Promise<T> {
    const deadline = this.clock.deadline(READINESS_CHECK_MS, late);
    try {
      return await Promise.race([check(), deadline.elapsed]);
    } finally {
      deadline.cancel();
    }
  }
}
