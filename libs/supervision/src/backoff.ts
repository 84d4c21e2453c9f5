import { setTimeout as sleep } from 'node:timers/promises';

export interface BackoffOptions {
  /** The first delay. */
  readonly initialMs?: number;
  /** No delay is longer. */
  readonly maxMs?: number;
}

/** Capped exponential backoff with full jitter: attempt n waits a random time up to
 * min(maxMs, initialMs × 2ⁿ), so replicas that lost the same server do not return in step. */
export class Backoff {
  private attempt = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;

  constructor({ initialMs = 100, maxMs = 5_000 }: BackoffOptions = {}) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
  }

  /** Failures since the last reset. */
  get failures(): number {
    return this.attempt;
  }

  /** The delay before the next attempt; each call counts one failure. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt += 1;
    return Math.max(this.initialMs / 2, Math.random() * ceiling);
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Waits `ms`, or less when `signal` aborts; never rejects. */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return;
  await sleep(ms, undefined, { signal }).catch(() => undefined);
}

export interface RetryOptions extends BackoffOptions {
  /** Stops retrying: `retry` then answers undefined. */
  readonly signal?: AbortSignal;
  /** Called after each failure, with the delay before the next attempt (which waits for it). */
  readonly onFailure?: (error: unknown, failures: number, delayMs: number) => void | Promise<void>;
  /** Whether a failure is worth another attempt; `retry` rethrows one that is not. Every one when
   * not given. */
  readonly retryable?: (error: unknown) => boolean;
}

/** Runs `work` until it succeeds, waiting with capped backoff after each failure; answers
 * undefined once `signal` aborts. */
export async function retry<T>(work: () => Promise<T>, options: RetryOptions = {}): Promise<T | undefined> {
  const backoff = new Backoff(options);
  while (!options.signal?.aborted) {
    try {
      return await work();
    } catch (error) {
      if (options.signal?.aborted) return undefined;
      if (options.retryable && !options.retryable(error)) throw error;
      const delayMs = backoff.next();
      await options.onFailure?.(error, backoff.failures, delayMs);
      await pause(delayMs, options.signal);
    }
  }
  return undefined;
}
