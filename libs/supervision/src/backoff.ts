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
  /** Whether the work is still wanted, asked before each attempt: `retry` answers undefined once it
   * is not. For conditions no signal announces, such as a batch gone stale. Always when not given. */
  readonly wanted?: () => boolean;
  /** At most this many attempts: the last one's failure is rethrown, without waiting. No limit when
   * not given. */
  readonly attempts?: number;
  /** Called after each failure, with the delay before the next attempt (which waits for it). */
  readonly onFailure?: (error: unknown, failures: number, delayMs: number) => void | Promise<void>;
  /** Whether a failure is worth another attempt; `retry` rethrows one that is not. Every one when
   * not given. */
  readonly retryable?: (error: unknown) => boolean;
  /** How the delay between attempts is spent, for a caller that must keep doing something meanwhile
   * (a consumer heartbeating). A `pause` that `signal` cuts short when not given. */
  readonly wait?: (delayMs: number) => Promise<void>;
}

/** Retry options with nothing that stops retrying early: `retry` then answers the work's result or
 * rethrows its failure. */
export type UnstoppableRetryOptions = Omit<RetryOptions, 'signal' | 'wanted'> & {
  readonly signal?: undefined;
  readonly wanted?: undefined;
};

/** Runs `work` until it succeeds, waiting with capped backoff after each failure; answers
 * undefined once `signal` aborts or the work is no longer `wanted`. The one retry loop of the
 * project: see "Retries" in docs/architecture.md. */
export function retry<T>(work: () => Promise<T>, options: UnstoppableRetryOptions): Promise<T>;
export function retry<T>(work: () => Promise<T>, options?: RetryOptions): Promise<T | undefined>;
export async function retry<T>(work: () => Promise<T>, options: RetryOptions = {}): Promise<T | undefined> {
  const { signal, attempts = Number.POSITIVE_INFINITY } = options;
  const backoff = new Backoff(options);
  const wait = options.wait ?? ((delayMs: number) => pause(delayMs, signal));
  while (!signal?.aborted && (options.wanted?.() ?? true)) {
    try {
      return await work();
    } catch (error) {
      if (signal?.aborted) return undefined;
      if (options.retryable && !options.retryable(error)) throw error;
      if (backoff.failures + 1 >= attempts) throw error;
      const delayMs = backoff.next();
      await options.onFailure?.(error, backoff.failures, delayMs);
      await wait(delayMs);
    }
  }
  return undefined;
}
