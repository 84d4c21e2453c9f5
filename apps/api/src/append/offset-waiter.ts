import { RequestOutcome } from '@castlog/domain';
import { DependencyHealth, NotificationListener } from '@castlog/supervision';
import {
  ActiveProjection,
  CommitNotice,
  CommittedOutcome,
  LocalCommits,
  OFFSETS_CHANNEL,
  OffsetNotice,
  OutcomesQuery,
  positionKey,
  PROJECTIONS_CHANNEL,
  ProjectionNotice,
  storedOffset,
} from '@castlog/read-model';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** How long the outcomes of requests a NOTIFY released wait to be told by a commit in this process
 * (`LocalCommits`) before they are read. */
const LOCAL_COMMIT_GRACE_MS = 2;

/** What a waiting request learns: its outcome, that it timed out, or that its position was passed
 * without an outcome (never expected: the outcome commits with the offset). */
export type WaitResult = RequestOutcome | 'timed-out' | 'missing';

interface Waiter {
  readonly partition: number;
  readonly offset: number;
  readonly eventId?: string;
  readonly settle: (result: WaitResult) => void;
}

/** Knows how far the active projection has stored each partition, woken by the projector's NOTIFY
 * (never by sleeping), and lets a request wait until its record is applied, then answers its
 * stored outcome: the requests released by the notices of one I/O turn (one projector transaction
 * notifies every partition it moved at once) get theirs in one query. A projector in the same
 * process tells its commits first (`LocalCommits`), with the outcomes they stored: the requests
 * those release get theirs with no query. It also hears projection switches, on the same
 * connection and so in commit order: an offset the old version reached before the switch is
 * reached by the new one too. */
export class OffsetWaiter {
  private readonly logger = new Logger(OffsetWaiter.name);
  /** Stored offsets of the version reads are served from (`storedFor`): cleared when reads switch. */
  private readonly stored = new Map<number, number>();
  private storedFor: string;
  private readonly waiters = new Map<number, Set<Waiter>>();
  private readonly listener: NotificationListener;
  private readonly outcomes: OutcomesQuery;
  /** Released waiters whose outcomes the next `deliver` reads. */
  private released: Waiter[] = [];
  /** Partitions the projector of this process has committed: their NOTIFY is mostly overtaken by
   * the commit itself (`LocalCommits`), which it may precede by a moment. */
  private readonly committedHere = new Set<number>();
  private stopHearingCommits?: () => void;

  constructor(
    url: string,
    private readonly dataSource: DataSource,
    private readonly readModel: ActiveProjection,
    health?: DependencyHealth,
    private readonly commits?: LocalCommits,
    private readonly localCommitGraceMs = LOCAL_COMMIT_GRACE_MS,
  ) {
    this.outcomes = new OutcomesQuery(dataSource, readModel);
    this.storedFor = readModel.schema;
    this.listener = new NotificationListener(
      url,
      [OFFSETS_CHANNEL, PROJECTIONS_CHANNEL],
      {
        notice: (channel, payload) => this.notice(channel, payload),
        listening: () => this.catchUp(),
        // Notices may be missed until we listen again: known offsets are read afresh from then on.
        lost: () => this.stored.clear(),
      },
      {
        component: 'offset-notices',
        health,
        log: (level, message) => this.logger[level === 'info' ? 'log' : level](message),
      },
    );
  }

  start(): Promise<void> {
    this.stopHearingCommits = this.commits?.subscribe((notice) => this.committed(notice));
    return this.listener.start();
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
      const awaited =
        (this.waiters.get(partition)?.size ?? 0) > 0 || this.released.some((w) => w.partition === partition);
      if (!awaited) {
        this.advance(partition, nextOffset);
        continue;
      }
      const committed = new Map(outcomes.map((outcome) => [outcome.offset, outcome]));
      this.advance(partition, nextOffset, committed);
      // The commit's NOTIFY may have come first: what it released waits unread for a moment.
      this.released = this.released.filter(
        (waiter) => waiter.partition !== partition || !this.settleFrom(waiter, committed),
      );
    }
  }

  private notice(channel: string, payload: string): void {
    if (channel === OFFSETS_CHANNEL) {
      const notice = JSON.parse(payload) as OffsetNotice;
      if (notice.schema === this.readModel.schema) this.advance(notice.partition, notice.next);
    } else if (channel === PROJECTIONS_CHANNEL) {
      const notice = JSON.parse(payload) as ProjectionNotice;
      if (notice.base !== this.readModel.versions.base) return;
      this.readModel.follow(notice);
      // In one process with the projector, the projector may have followed the switch first.
      if (this.storedFor !== this.readModel.schema) this.switched();
    }
  }

  private switched(): void {
    this.storedFor = this.readModel.schema;
    this.logger.log(
      `reads now served by projection version ${this.readModel.version} (${this.readModel.schema})`,
    );
    this.stored.clear();
    for (const partition of this.waiters.keys()) void this.refresh(partition).catch(() => undefined);
  }

  /** Notices sent while not listening are caught up from the tables. */
  private async catchUp(): Promise<void> {
    await this.readModel.refresh();
    if (this.storedFor !== this.readModel.schema) this.switched();
    for (const partition of this.waiters.keys()) await this.refresh(partition);
  }

  /** Releases the partition's waiters below `next`: those whose outcome is `committed` (by offset)
   * get it now, the others from the next `deliver`. */
  private advance(partition: number, next: number, committed?: ReadonlyMap<number, CommittedOutcome>): void {
    if (next <= (this.stored.get(partition) ?? -1)) return;
    this.stored.set(partition, next);
    const waiting = this.waiters.get(partition);
    if (!waiting) return;
    for (const waiter of waiting) {
      if (waiter.offset >= next) continue;
      waiting.delete(waiter);
      if (this.settleFrom(waiter, committed)) continue;
      // Only the first waiter released schedules the delivery; the others join it.
      if (this.released.push(waiter) > 1) continue;
      // A NOTIFY of a partition this process's projector commits: the commit, with the outcomes,
      // is about to be told here too; the read waits for it a moment.
      if (!committed && this.committedHere.has(partition))
        setTimeout(() => void this.deliver(), this.localCommitGraceMs);
      else setImmediate(() => void this.deliver());
    }
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
    let found = new Map<string, RequestOutcome>();
    try {
      found = await this.outcomes.atPositions(released);
    } catch (error) {
      this.logger.warn(`reading the outcomes of ${released.length} requests failed: ${String(error)}`);
    }
    for (const waiter of released) waiter.settle(found.get(positionKey(waiter)) ?? 'missing');
  }

  private async refresh(partition: number): Promise<void> {
    const schema = this.readModel.schema;
    const next = await storedOffset(this.dataSource, schema, partition);
    // A switch while reading makes this the old version's offset: the new one's is read by it.
    if (schema === this.readModel.schema) this.advance(partition, next);
  }

  /** The outcome of the record at (partition, offset) once it is applied, if it is the event
   * `eventId`; 'missing' when the projection passed the position without it; 'timed-out' after
   * `timeoutMs`. */
  async outcomeOf(
    partition: number,
    offset: number,
    timeoutMs: number,
    eventId?: string,
  ): Promise<WaitResult> {
    if ((this.stored.get(partition) ?? -1) > offset)
      return (await this.outcomes.at({ partition, offset, eventId })) ?? 'missing';
    let timer: NodeJS.Timeout | undefined;
    let waiter: Waiter | undefined;
    const applied = new Promise<WaitResult>((resolve) => {
      waiter = { partition, offset, eventId, settle: resolve };
      const set = this.waiters.get(partition) ?? new Set<Waiter>();
      set.add(waiter);
      this.waiters.set(partition, set);
      timer = setTimeout(() => resolve('timed-out'), timeoutMs);
    });
    // Until a notice or a read has given this partition's offset since we listen, the notice may
    // have come before: read it. Once known, every later advance arrives as a notice.
    if (!this.stored.has(partition)) await this.refresh(partition).catch(() => undefined);
    const result = await applied;
    clearTimeout(timer);
    if (waiter) this.waiters.get(partition)?.delete(waiter);
    return result;
  }

  async close(): Promise<void> {
    this.stopHearingCommits?.();
    for (const set of this.waiters.values()) for (const waiter of set) waiter.settle('timed-out');
    for (const waiter of this.released) waiter.settle('timed-out');
    this.released = [];
    await this.listener.close();
  }
}
