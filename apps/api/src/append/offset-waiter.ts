import { OFFSETS_CHANNEL, OffsetNotice, storedOffset } from '@castlog/projector';
import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';

interface Waiter {
  readonly offset: number;
  readonly settle: (applied: boolean) => void;
}

const RECONNECT_DELAY_MS = 1000;

/** Knows how far the projection has stored each partition, woken by the projector's NOTIFY (never
 * by sleeping), and lets a request wait until its record is applied. */
export class OffsetWaiter {
  private readonly logger = new Logger(OffsetWaiter.name);
  private readonly stored = new Map<number, number>();
  private readonly waiters = new Map<number, Set<Waiter>>();
  private listener?: Client;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly dataSource: DataSource,
    private readonly schema: string,
  ) {}

  async start(): Promise<void> {
    const listener = new Client({ connectionString: this.url });
    listener.on('notification', (message) => {
      if (message.channel !== OFFSETS_CHANNEL || !message.payload) return;
      const notice = JSON.parse(message.payload) as OffsetNotice;
      if (notice.schema === this.schema) this.advance(notice.partition, notice.next);
    });
    listener.on('error', (error) => {
      this.logger.warn(`offset listener lost (${error.message}); reconnecting`);
      // Notices may be missed until we listen again: known offsets are read afresh from then on.
      this.stored.clear();
      void listener.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => void this.start().catch(() => undefined), RECONNECT_DELAY_MS);
    });
    await listener.connect();
    await listener.query(`LISTEN ${OFFSETS_CHANNEL}`);
    this.listener = listener;
    // Notices sent while not listening are caught up from the table.
    for (const partition of this.waiters.keys()) await this.refresh(partition);
  }

  private advance(partition: number, next: number): void {
    if (next <= (this.stored.get(partition) ?? -1)) return;
    this.stored.set(partition, next);
    const waiting = this.waiters.get(partition);
    if (!waiting) return;
    for (const waiter of waiting) {
      if (waiter.offset < next) {
        waiting.delete(waiter);
        waiter.settle(true);
      }
    }
  }

  private async refresh(partition: number): Promise<void> {
    this.advance(partition, await storedOffset(this.dataSource, this.schema, partition));
  }

  /** Resolves true once the record at (partition, offset) is applied; false after `timeoutMs`. */
  async waitFor(partition: number, offset: number, timeoutMs: number): Promise<boolean> {
    if ((this.stored.get(partition) ?? -1) > offset) return true;
    let timer: NodeJS.Timeout | undefined;
    let waiter: Waiter | undefined;
    const applied = new Promise<boolean>((resolve) => {
      waiter = { offset, settle: resolve };
      const set = this.waiters.get(partition) ?? new Set<Waiter>();
      set.add(waiter);
      this.waiters.set(partition, set);
      timer = setTimeout(() => resolve(false), timeoutMs);
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
    this.closed = true;
    for (const set of this.waiters.values()) for (const waiter of set) waiter.settle(false);
    await this.listener?.end().catch(() => undefined);
  }
}
