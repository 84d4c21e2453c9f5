import { RequestOutcome } from '@castlog/domain';
import { DependencyHealth, retry } from '@castlog/supervision';
import {
  ActiveProjection,
  CommitNotice,
  CommittedOutcome,
  LocalCommits,
  OffsetWait,
  OffsetWatch,
  OutcomesQuery,
  positionKey,
  PROJECTIONS_CHANNEL,
  ProjectionNotice,
} from '@castlog/read-model';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** How long the outcomes of requests a NOTIFY released wait to be told by a commit in this process
 * (`LocalCommits`) before they are read. */
const LOCAL_COMMIT_GRACE_MS = 2;

/** What a waiting request learns: its outcome, that it timed out, that its position was passed
 * without an outcome of its event (never expected: the outcome commits with the offset), or that
 * its position was passed but its outcome could not be read before its deadline. */
export type WaitResult = RequestOutcome | 'timed-out' | 'missing' | 'unknown';

interface Waiter extends OffsetWait {
  readonly eventId?: string;
  /** When the request stops waiting: until then a failed read of its outcome is tried again. */
  readonly deadline: number;
  readonly settle: (result: WaitResult) => void;
}

/** Lets a request wait until its record is applied, then answers its stored outcome. How far the
 * active projection has stored each partition is an OffsetWatch's, woken by the projector's NOTIFY
 * (never by sleeping). The requests released by the notices of one I/O turn (one projector
 * transaction notifies every partition it moved at once) get their outcomes in one query. A
 * projector in the same process tells its commits first (`LocalCommits`), with the outcomes they
 * stored: the requests those release get theirs with no query. It also hears projection switches,
 * on the same connection and so in commit order: an offset the old version reached before the
 * switch is reached by the new one too. */
export class OffsetWaiter {
  private readonly logger = new Logger(OffsetWaiter.name);
  /** The version whose stored offsets the watch knows: they are forgotten when reads switch. */
  private storedFor: string;
  private readonly watch: OffsetWatch;
  private readonly outcomes: OutcomesQuery;
  /** Released waiters whose outcomes the next `deliver` reads. */
  private released: Waiter[] = [];
  /** Partitions the projector of this process has committed: their NOTIFY is mostly overtaken by
   * the commit itself (`LocalCommits`), which it may precede by a moment. */
  private readonly committedHere = new Set<number>();
  private stopHearingCommits?: () => void;
  private readonly closed = new AbortController();
  /** What `close` ends: each waiting request (settled as timed out) and each outcome read. */
  private readonly pending = new Set<() => void>();

  constructor(
    url: string,
    dataSource: DataSource,
    private readonly readModel: ActiveProjection,
    health?: DependencyHealth,
    private readonly commits?: LocalCommits,
    private readonly localCommitGraceMs = LOCAL_COMMIT_GRACE_MS,
  ) {
    this.outcomes = new OutcomesQuery(dataSource, readModel);
    this.storedFor = readModel.schema;
    this.watch = new OffsetWatch(url, dataSource, {
      component: 'offset-notices',
      schema: () => readModel.schema,
      health,
      log: (level, message) => this.logger[level === 'info' ? 'log' : level](message),
      channels: { [PROJECTIONS_CHANNEL]: (payload) => this.projectionNotice(payload) },
      listening: () => this.catchUp(),
    });
  }

  start(): Promise<void> {
    this.stopHearingCommits = this.commits?.subscribe((notice) => this.committed(notice));
    return this.watch.start();
  }

  /** A commit of the projector in this process: its offsets, as its NOTIFYs will say, and the
   * outcomes it stored, which the waiters it releases get without a read. */
  private committed(notice: CommitNotice): void {
    // Settled in a turn of its own: the projector that tells it goes on to its next transaction
    // first, ahead of the work of answering the requests it released.
    setImmediate(() => this.settleCommitted(notice));
  }

  private settleCommitted(notice: CommitNotice): void {
    if (notice.schema !== this.readModel.schema) return;
    for (const { partition, nextOffset, outcomes } of notice.partitions) {
      this.committedHere.add(partition);
      // The outcomes by offset only where requests wait: a catch-up commits thousands nobody awaits.
      const awaited = this.watch.awaited(partition) || this.released.some((w) => w.partition === partition);
      if (!awaited) {
        this.watch.advance(partition, nextOffset);
        continue;
      }
      const committed = new Map(outcomes.map((outcome) => [outcome.offset, outcome]));
      this.watch.advance(partition, nextOffset, committed);
      // The commit's NOTIFY may have come first: what it released waits unread for a moment.
      this.released = this.released.filter(
        (waiter) => waiter.partition !== partition || !this.settleFrom(waiter, committed),
      );
    }
  }

  private projectionNotice(payload: string): void {
    const notice = JSON.parse(payload) as ProjectionNotice;
    if (notice.base !== this.readModel.versions.base) return;
    this.readModel.follow(notice);
    // In one process with the projector, the projector may have followed the switch first.
    if (this.storedFor !== this.readModel.schema) this.switched();
  }

  private switched(): void {
    this.storedFor = this.readModel.schema;
    this.logger.log(
      `reads now served by projection version ${this.readModel.version} (${this.readModel.schema})`,
    );
    this.watch.forget();
    for (const partition of this.watch.awaitedPartitions())
      void this.watch.refresh(partition).catch(() => undefined);
  }

  /** Notices sent while not listening are caught up from the tables: the active version here, the
   * offsets by the watch after it. */
  private async catchUp(): Promise<void> {
    await this.readModel.refresh();
    if (this.storedFor !== this.readModel.schema) this.switched();
  }

  /** The waiter's position is passed: it gets the outcome `committed` (by offset) holds, or the one
   * the next `deliver` reads. */
  private passed(waiter: Waiter, committed?: ReadonlyMap<number, CommittedOutcome>): void {
    if (this.settleFrom(waiter, committed)) return;
    // Only the first waiter released schedules the delivery; the others join it.
    if (this.released.push(waiter) > 1) return;
    // A NOTIFY of a partition this process's projector commits: the commit, with the outcomes,
    // is about to be told here too; the read waits for it a moment.
    if (!committed && this.committedHere.has(waiter.partition))
      setTimeout(() => void this.deliver(), this.localCommitGraceMs);
    else setImmediate(() => void this.deliver());
  }

  /** Settles the waiter when `committed` (its partition's, by offset) holds its position: as
   * `deliver` reads it, the outcome there only when it is the waiter's event's. */
  private settleFrom(waiter: Waiter, committed?: ReadonlyMap<number, CommittedOutcome>): boolean {
    const applied = committed?.get(waiter.offset);
    if (!applied) return false;
    waiter.settle(
      waiter.eventId === undefined || waiter.eventId === applied.eventId ? applied.outcome : 'missing',
    );
    return true;
  }

  private async deliver(): Promise<void> {
    const released = this.released;
    if (released.length === 0) return;
    this.released = [];
    const found = await this.readOutcomes(released);
    if (found) for (const waiter of released) waiter.settle(found.get(positionKey(waiter)) ?? 'missing');
  }

  /** The outcomes at the waiters' positions. A failed read is a passing database error, not lost
   * data: it is tried again with capped backoff until the last of their deadlines (each settles as
   * 'unknown' at its own), or until closed, and then answers undefined. */
  private async readOutcomes(waiters: readonly Waiter[]): Promise<Map<string, RequestOutcome> | undefined> {
    if (this.closed.signal.aborted) return undefined;
    // Ended by the deadline or by `close` (through `pending`, like the waiting requests: no
    // listener per read on the long-lived `closed` signal).
    const expired = new AbortController();
    const expire = (): void => expired.abort();
    const deadline = Math.max(...waiters.map((waiter) => waiter.deadline));
    const timer = setTimeout(expire, deadline - Date.now());
    this.pending.add(expire);
    try {
      return await retry(() => this.outcomes.atPositions(waiters), {
        signal: expired.signal,
        onFailure: (error, failures) => {
          if (failures > 1) return;
          this.logger.warn(
            `reading the outcomes of ${waiters.length} requests failed: ${String(error)}; ` +
              'trying again until they time out',
          );
        },
      });
    } finally {
      clearTimeout(timer);
      this.pending.delete(expire);
    }
  }

  /** The outcome of the record at (partition, offset) once it is applied, if it is the event
   * `eventId`; 'missing' when the projection passed the position without it; after `timeoutMs`,
   * 'timed-out', or 'unknown' when the position was passed but its outcome could not be read. */
  async outcomeOf(
    partition: number,
    offset: number,
    timeoutMs: number,
    eventId?: string,
  ): Promise<WaitResult> {
    let passed = false;
    let settle: (result: WaitResult) => void = () => undefined;
    const result = new Promise<WaitResult>((resolve) => (settle = resolve));
    const waiter: Waiter = {
      partition,
      offset,
      eventId,
      deadline: Date.now() + timeoutMs,
      settle,
      onPassed: (committed) => {
        passed = true;
        this.passed(waiter, committed);
      },
    };
    const timer = setTimeout(() => settle(passed ? 'unknown' : 'timed-out'), timeoutMs);
    const close = (): void => settle('timed-out');
    this.pending.add(close);
    try {
      // A position known to be passed is read at once, on its own. Neither start is awaited: a
      // query that hangs must not hold the answer past its deadline.
      if ((this.watch.stored(partition) ?? -1) > offset) {
        passed = true;
        void this.readOutcomes([waiter]).then((found) => {
          if (found) settle(found.get(positionKey(waiter)) ?? 'missing');
        });
      } else void this.watch.add(waiter).catch(() => undefined);
      return await result;
    } finally {
      clearTimeout(timer);
      this.pending.delete(close);
      this.watch.remove(waiter);
    }
  }

  async close(): Promise<void> {
    this.stopHearingCommits?.();
    this.closed.abort();
    for (const close of this.pending) close();
    this.released = [];
    await this.watch.close();
  }
}
