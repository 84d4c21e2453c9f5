import { loadConfig } from '@castlog/config';
import { ResolverProgress } from '@castlog/feeds';
import type { EventLog } from '@castlog/event-log';
import type { ActiveProjection, Database } from '@castlog/read-model';
import { DependencyHealth } from '@castlog/supervision';
import { Metrics } from './metrics';
import { ProjectionStatus } from './projection-status';
import { CheckClock, ProcessReport, READINESS_CHECK_MS } from './readiness';

const never = () => new Promise<never>(() => undefined);

/** A clock whose deadlines elapse when the test says so. */
class ManualClock implements CheckClock {
  private readonly pending = new Set<{ readonly ms: number; readonly elapse: () => void }>();
  private changed: () => void = () => undefined;

  now(): number {
    return 0;
  }

  deadline(ms: number, late: () => string) {
    let entry: { readonly ms: number; readonly elapse: () => void } | undefined;
    const elapsed = new Promise<never>((_, reject) => {
      entry = { ms, elapse: () => reject(new Error(late())) };
    });
    // The race has its own handler; a deadline that elapses after its check answered is no error.
    elapsed.catch(() => undefined);
    if (entry) this.pending.add(entry);
    this.changed();
    return {
      elapsed,
      cancel: () => {
        if (entry) this.pending.delete(entry);
        this.changed();
      },
    };
  }

  /** Once exactly `count` deadlines wait (the checks that answered have cancelled theirs). */
  async waiting(count: number): Promise<void> {
    while (this.pending.size !== count) await new Promise<void>((resolve) => (this.changed = resolve));
  }

  /** The deadlines that wait, by their lengths. */
  lengths(): number[] {
    return [...this.pending].map(({ ms }) => ms);
  }

  /** Lets every deadline that waits elapse. */
  elapseAll(): void {
    for (const entry of this.pending) entry.elapse();
    this.pending.clear();
  }
}

/** A report whose read model answers its queries with `query` (on a connection its pool hands
 * over at once) and whose event log answers its end offsets with `endOffsets`. */
function reportWith(
  query: () => Promise<unknown>,
  endOffsets: () => Promise<Map<number, number>>,
  clock: CheckClock = new ManualClock(),
  feeds?: ResolverProgress,
) {
  const client = { query: async () => ({ rows: await query() }), release: () => undefined };
  const pool = { connect: async () => client };
  const database = { schema: 'castlog', dataSource: { driver: { master: pool } } } as unknown as Database;
  const eventLog = { endOffsets } as unknown as EventLog;
  const config = loadConfig({});
  const status = new ProjectionStatus(config, database, eventLog, {
    version: 1,
    schema: 'castlog',
  } as ActiveProjection);
  const health = new DependencyHealth();
  return new ProcessReport(config, status, new Metrics(health), health, clock, feeds);
}

describe('ProcessReport: readiness', () => {
  it('is ready when the read model and the event log answer and the projection keeps up', async () => {
    const report = reportWith(
      async () => [{ partition: 0, next_offset: '7' }],
      async () => new Map([[0, 10]]),
    );
    await expect(report.readiness()).resolves.toEqual({
      ready: true,
      projectionVersion: 1,
      projectionLag: 3,
    });
  });

  it('stays ready with a line in its details while the feed resolver looks stuck', async () => {
    const clock = new ManualClock();
    const feeds = new ResolverProgress();
    feeds.started(clock.now() - 10 * 60_000);
    feeds.measured({ known: 40, due: 12, oldestDueMs: clock.now() - 10 * 60_000 });
    const report = reportWith(
      async () => [{ partition: 0, next_offset: '10' }],
      async () => new Map([[0, 10]]),
      clock,
      feeds,
    );
    await expect(report.readiness()).resolves.toEqual({
      ready: true,
      projectionVersion: 1,
      projectionLag: 0,
      details: ['feed resolver: no fetch has ended for 600 s while 12 feeds are due'],
    });
    feeds.progressed(clock.now());
    await expect(report.readiness()).resolves.not.toHaveProperty('details');
  });

  it('names the read model when PostgreSQL holds the query without answering past the check time', async () => {
    const clock = new ManualClock();
    const readiness = reportWith(never, async () => new Map(), clock).readiness();
    await clock.waiting(1);
    expect(clock.lengths()).toEqual([READINESS_CHECK_MS]);
    clock.elapseAll();
    expect(await readiness).toEqual({
      ready: false,
      reason: `read model: no answer within ${READINESS_CHECK_MS} ms`,
    });
  });

  it('names the event log when Kafka holds the offsets request without answering past the check time', async () => {
    const clock = new ManualClock();
    const readiness = reportWith(async () => [], never, clock).readiness();
    await clock.waiting(1);
    clock.elapseAll();
    expect(await readiness).toEqual({
      ready: false,
      reason: `event log: no answer within ${READINESS_CHECK_MS} ms`,
    });
  });

  it('names the error of a dependency that refuses', async () => {
    const report = reportWith(
      () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
      async () => new Map(),
    );
    expect(await report.readiness()).toEqual({
      ready: false,
      reason: 'read model: connect ECONNREFUSED 127.0.0.1:5432',
    });
  });

  it("names each dependency that holds its request, both asked at once: one check's time", async () => {
    const clock = new ManualClock();
    const readiness = reportWith(never, never, clock).readiness();
    // Both deadlines run side by side; letting them elapse once settles the answer.
    await clock.waiting(2);
    expect(clock.lengths()).toEqual([READINESS_CHECK_MS, READINESS_CHECK_MS]);
    clock.elapseAll();
    expect(await readiness).toEqual({
      ready: false,
      reason:
        `read model: no answer within ${READINESS_CHECK_MS} ms; ` +
        `event log: no answer within ${READINESS_CHECK_MS} ms`,
    });
  });
});
