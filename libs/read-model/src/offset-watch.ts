import { DependencyHealth, LogFn, NotificationListener, pause } from '@castlog/supervision';
import { CommittedOutcome, OFFSETS_CHANNEL, OffsetNotice } from './notifications';
import { storedOffset, storedOffsets } from './projection-offsets';
import { Sql } from './sql';

/** A position waited for: `onPassed` is called once the stored offset of `partition` is past
 * `offset`, with the outcomes a local commit told (`OffsetWatch.advance`) when it was that. */
export interface OffsetWait {
  readonly partition: number;
  readonly offset: number;
  readonly onPassed: (committed?: ReadonlyMap<number, CommittedOutcome>) => void;
}

export interface OffsetWatchOptions {
  /** The name under which `health` and the log know the listening connection. */
  readonly component: string;
  /** The projection whose offsets count, asked anew each time: reads may switch versions. */
  readonly schema: () => string;
  readonly health?: DependencyHealth;
  readonly log?: LogFn;
  /** Other channels heard on the same connection, so in commit order with the offsets' notices. */
  readonly channels?: Readonly<Record<string, (payload: string) => void>>;
  /** Called first each time the watch (re)starts listening, before the offsets are read afresh. */
  readonly listening?: () => Promise<void>;
}

/** A projection's stored offsets as its projector's NOTIFYs announce them, on a connection that
 * reconnects (NotificationListener) and reads them afresh after each reconnection, and the
 * positions callers wait for: castlog's one way to wait until the stored offsets pass a position
 * (never by sleeping). */
export class OffsetWatch {
  private readonly known = new Map<number, number>();
  private readonly waits = new Map<number, Set<OffsetWait>>();
  private readonly moved = new Set<() => void>();
  private readonly listener: NotificationListener;

  constructor(
    url: string,
    private readonly sql: Sql,
    private readonly options: OffsetWatchOptions,
  ) {
    const channels = options.channels ?? {};
    this.listener = new NotificationListener(
      url,
      [OFFSETS_CHANNEL, ...Object.keys(channels)],
      {
        notice: (channel, payload) =>
          channel === OFFSETS_CHANNEL ? this.noticed(payload) : channels[channel]?.(payload),
        listening: () => this.catchUp(),
        // Notices may be missed until we listen again: known offsets are read afresh from then on.
        lost: () => this.forget(),
      },
      { component: options.component, health: options.health, log: options.log },
    );
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  /** The partition's stored offset, when a notice or a read has given it since we listen. */
  stored(partition: number): number | undefined {
    return this.known.get(partition);
  }

  /** Whether anyone waits for a position in `partition`. */
  awaited(partition: number): boolean {
    return (this.waits.get(partition)?.size ?? 0) > 0;
  }

  /** Waits for `wait`'s position: passed at once when known to be, else when an advance passes it.
   * Until a notice or a read has given the partition's offset since we listen, the notice may have
   * come before: it is read. */
  async add(wait: OffsetWait): Promise<void> {
    if ((this.known.get(wait.partition) ?? -1) > wait.offset) return wait.onPassed();
    const waits = this.waits.get(wait.partition) ?? new Set<OffsetWait>();
    waits.add(wait);
    this.waits.set(wait.partition, waits);
    if (!this.known.has(wait.partition)) await this.refresh(wait.partition);
  }

  remove(wait: OffsetWait): void {
    this.waits.get(wait.partition)?.delete(wait);
  }

  /** The partitions where anyone waits. */
  awaitedPartitions(): number[] {
    return [...this.waits].filter(([, waits]) => waits.size > 0).map(([partition]) => partition);
  }

  /** The stored offset of `partition` is `next` (a notice, a read, a local commit that tells the
   * outcomes it stored): passes the waits below it, once each. */
  advance(partition: number, next: number, committed?: ReadonlyMap<number, CommittedOutcome>): void {
    if (next <= (this.known.get(partition) ?? -1)) return;
    this.known.set(partition, next);
    for (const wake of this.moved) wake();
    const waits = this.waits.get(partition);
    if (!waits) return;
    for (const wait of waits) {
      if (wait.offset >= next) continue;
      waits.delete(wait);
      wait.onPassed(committed);
    }
  }

  /** Forgets the offsets known (notices may be missed, or reads switched to another version). */
  forget(): void {
    this.known.clear();
  }

  /** Reads the partition's stored offset; a switch while reading makes it the old version's, which
   * is then left to the new one's reads. */
  async refresh(partition: number): Promise<void> {
    const schema = this.options.schema();
    const next = await storedOffset(this.sql, schema, partition);
    if (schema === this.options.schema()) this.advance(partition, next);
  }

  /** Waits until the stored offsets reach `target` in every partition or pass it in one, or for
   * `timeoutMs` at most, and answers whether they did and where they stand (in `target`'s
   * partitions). They are read first: a projection that stores offsets without notices is seen. */
  async reach(
    target: ReadonlyMap<number, number>,
    timeoutMs: number,
  ): Promise<{ reached: boolean; offsets: Map<number, number> }> {
    const done = new AbortController();
    let behind = 0;
    const waits: OffsetWait[] = [];
    for (const [partition, next] of target) {
      if (next > 0) {
        behind += 1;
        const reached = () => {
          behind -= 1;
          if (behind === 0) done.abort();
        };
        waits.push({ partition, offset: next - 1, onPassed: reached });
      }
      waits.push({ partition, offset: next, onPassed: () => done.abort() });
    }
    try {
      await this.read(target.keys());
      for (const wait of waits) await this.add(wait);
      if (behind > 0 && !done.signal.aborted) await pause(timeoutMs, done.signal);
      // Out of time, the answer comes from a fresh read, not from what notices (or a connection
      // lost meanwhile, which forgets them) left known.
      if (behind > 0 && !done.signal.aborted) await this.read(target.keys()).catch(() => undefined);
      const offsets = new Map(
        [...target.keys()].map((partition) => [partition, this.known.get(partition) ?? 0]),
      );
      return { reached: behind === 0 || done.signal.aborted, offsets };
    } finally {
      for (const wait of waits) this.remove(wait);
    }
  }

  /** Resolves at the next advance of any partition, or after `ms`. */
  nextAdvance(ms: number): Promise<void> {
    const moved = new AbortController();
    const wake = () => moved.abort();
    this.moved.add(wake);
    return pause(ms, moved.signal).finally(() => this.moved.delete(wake));
  }

  async close(): Promise<void> {
    await this.listener.close();
  }

  private noticed(payload: string): void {
    const notice = JSON.parse(payload) as OffsetNotice;
    if (notice.schema === this.options.schema()) this.advance(notice.partition, notice.next);
  }

  /** After (re)listening: the caller's own catching up, then the offsets read afresh. */
  private async catchUp(): Promise<void> {
    await this.options.listening?.();
    await this.read(this.waits.keys());
  }

  /** Reads every partition's stored offset (one awaited but not stored yet stands at 0). */
  private async read(awaited: Iterable<number>): Promise<void> {
    const schema = this.options.schema();
    const offsets = await storedOffsets(this.sql, schema);
    if (schema !== this.options.schema()) return;
    for (const partition of awaited) if (!offsets.has(partition)) offsets.set(partition, 0);
    for (const [partition, next] of offsets) this.advance(partition, next);
  }
}
