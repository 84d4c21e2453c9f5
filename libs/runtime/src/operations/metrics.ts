import { RequestMetrics } from '@castlog/http';
import { DependencyHealth } from '@castlog/supervision';
import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Every Prometheus metric castlog exposes at /metrics, in one registry per process. */
@Injectable()
export class Metrics implements RequestMetrics {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'castlog_http_request_duration_seconds',
    help: 'HTTP request latency by route template, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly appendDuration = new Histogram({
    name: 'castlog_event_append_duration_seconds',
    help: 'Time to append one request event to the log (group commit included)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [this.registry],
  });

  readonly readYourWritesWait = new Histogram({
    name: 'castlog_read_your_writes_wait_seconds',
    help: 'Time a write waited for the projection to apply it and for its stored outcome',
    labelNames: ['result'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly batchSize = new Histogram({
    name: 'castlog_projector_batch_size',
    help: 'Events applied per projector transaction',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2000, 5000],
    registers: [this.registry],
  });

  readonly batchDuration = new Histogram({
    name: 'castlog_projector_batch_apply_seconds',
    help: 'Time to apply one projector batch (load, decide, write, commit)',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly projectorLag = new Gauge({
    name: 'castlog_projector_lag_events',
    help: 'Events in the log not yet applied, per projection version and partition (measured at scrape)',
    labelNames: ['version', 'partition'] as const,
    registers: [this.registry],
  });

  readonly activeProjectionVersion = new Gauge({
    name: 'castlog_projection_active_version',
    help: 'The projection version that serves reads',
    registers: [this.registry],
  });

  readonly deletions = new Gauge({
    name: 'castlog_deletions',
    help: 'Deletions in the read model by status (measured at scrape)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly projectorErrors = new Counter({
    name: 'castlog_projector_errors_total',
    help: 'Projector batches that failed and were retried',
    registers: [this.registry],
  });

  readonly reusedOffsets = new Counter({
    name: 'castlog_projector_reused_offsets_total',
    help: 'Applied log positions found holding another event: the log lost acknowledged records (see docs/operations.md)',
    labelNames: ['partition'] as const,
    registers: [this.registry],
  });

  readonly disconnections = new Counter({
    name: 'castlog_dependency_disconnections_total',
    help: 'Times a connection to a dependency was lost (component: postgres, event-log, offset-notices, token-notices, projection, embedded-postgres)',
    labelNames: ['component'] as const,
    registers: [this.registry],
  });

  readonly reconnections = new Counter({
    name: 'castlog_dependency_reconnections_total',
    help: 'Times a lost dependency was reached again',
    labelNames: ['component'] as const,
    registers: [this.registry],
  });

  readonly outageSeconds = new Histogram({
    name: 'castlog_dependency_outage_seconds',
    help: 'How long a dependency was out of reach, from the first failure to the reconnection',
    labelNames: ['component'] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  readonly dependencyUp = new Gauge({
    name: 'castlog_dependency_up',
    help: '1 while the process reaches the dependency, 0 during an outage (components seen so far)',
    labelNames: ['component'] as const,
    registers: [this.registry],
  });

  readonly feedFetches = new Counter({
    name: 'castlog_feed_fetches_total',
    help: 'Feed fetches recorded by this process, by outcome (fetched, not-modified, malformed, refused, timeout, too-large, http-error, network-error, too-many-redirects)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly feedsKnown = new Gauge({
    name: 'castlog_feeds_known',
    help: 'Feeds in the catalog (measured by the resolver running in this process)',
    registers: [this.registry],
  });

  readonly oldestDueFetch = new Gauge({
    name: 'castlog_feed_oldest_due_fetch_seconds',
    help: 'How long the feed due the longest has waited for its fetch (0 when none is due; measured by the resolver running in this process)',
    registers: [this.registry],
  });

  constructor(health: DependencyHealth) {
    collectDefaultMetrics({ register: this.registry, prefix: 'castlog_' });
    health.observe({
      lost: (component) => {
        this.disconnections.inc({ component });
        this.dependencyUp.set({ component }, 0);
      },
      restored: (component, outageMs) => {
        this.reconnections.inc({ component });
        this.outageSeconds.observe({ component }, outageMs / 1000);
        this.dependencyUp.set({ component }, 1);
      },
    });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.labels(method, route, String(status)).observe(seconds);
  }
}
