import { performance } from 'node:perf_hooks';
import { pause } from './backoff';

export interface PacerClock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  wait(ms: number, signal?: AbortSignal): Promise<void>;
}

const REAL_CLOCK: PacerClock = { now: () => performance.now(), wait: pause };

/** Spaces starts of work `1000 / perSecond` ms apart: each `next()` resolves at its own slot, the
 * slot after the last one handed out, or at once when that slot has passed (time left unused is
 * not saved up for a burst). */
export class Pacer {
  private nextSlotMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly perSecond: number,
    private readonly clock: PacerClock = REAL_CLOCK,
  ) {}

  async next(signal?: AbortSignal): Promise<void> {
    const nowMs = this.clock.now();
    const slotMs = Math.max(nowMs, this.nextSlotMs);
    this.nextSlotMs = slotMs + 1000 / this.perSecond;
    if (slotMs > nowMs) await this.clock.wait(slotMs - nowMs, signal);
  }
}
