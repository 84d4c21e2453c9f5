import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Every Prometheus metric castlog exposes at /metrics, in one registry per process. */
@Injectable()
export class Metrics {
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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'castlog_' });
  }
}
