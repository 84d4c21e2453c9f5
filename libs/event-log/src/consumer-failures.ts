import { ConsumeOptions } from './event-log.port';

/** The failures a consumer has reported and not yet got past, each under its cause (the log, a
 * partition's start position, a partition's batch): it passes each failure to `onError` and calls
 * `onRecovered` once every reported cause has cleared. A cause clears by a later success of the same
 * work, not by the next record: a consumer whose partitions are quiet recovers too. */
export class ConsumerFailures {
  private readonly failing = new Set<string>();
  private reported = false;
  /** Whether `answering` has reported since the last failure. */
  private answeringSaid = false;

  constructor(private readonly options: Pick<ConsumeOptions, 'onError' | 'onRecovered'>) {}

  failed(cause: string, error: unknown): void {
    this.failing.add(cause);
    this.reported = true;
    this.answeringSaid = false;
    this.options.onError?.(error);
  }

  /** The work of `cause` answers again but the failure stands until it clears (a broker that is
   * back, while the consumer waits to rejoin its group): `why` becomes the reason reported, once,
   * instead of the last error. */
  answering(cause: string, why: Error): void {
    if (!this.failing.has(cause) || this.answeringSaid) return;
    this.answeringSaid = true;
    this.options.onError?.(why);
  }

  cleared(cause: string): void {
    this.failing.delete(cause);
    this.settle();
  }

  /** A new start of the consumer (a group generation, a new connection): failures of the old one are
   * over, and only `pending` — work the new start has yet to do — stands between it and recovery. */
  restarted(pending: Iterable<string> = []): void {
    this.failing.clear();
    for (const cause of pending) this.failing.add(cause);
    this.settle();
  }

  private settle(): void {
    if (!this.reported || this.failing.size > 0) return;
    this.reported = false;
    this.options.onRecovered?.();
  }
}
