export interface GroupCommitLimits<T> {
  readonly maxItems: number;
  readonly maxBytes: number;
  readonly sizeOf: (item: T) => number;
  /** Flushes in flight at once (default 1). Items wait while all are busy, and go out together. */
  readonly maxInFlight?: number;
  /** Start a flush only once the submits of the current turn of the event loop are in (default:
   * at once), so calls made together share a flush even when a flush is free. */
  readonly gatherTurn?: boolean;
}

/** Gathers concurrent calls into one flush: while a flush is in flight, new items wait and go out
 * together in the next one. Each caller gets its own result back. */
export class GroupCommit<T, R> {
  private pending: { item: T; size: number; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private gathering = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    private readonly limits: GroupCommitLimits<T>,
  ) {}

  submit(items: readonly T[]): Promise<R[]> {
    const results = items.map(
      (item) =>
        new Promise<R>((resolve, reject) =>
          this.pending.push({ item, size: this.limits.sizeOf(item), resolve, reject }),
        ),
    );
    if (!this.limits.gatherTurn) this.drain();
    else if (!this.gathering) {
      this.gathering = true;
      setImmediate(() => {
        this.gathering = false;
        this.drain();
      });
    }
    return Promise.all(results);
  }

  private drain(): void {
    while (this.pending.length > 0 && this.inFlight < (this.limits.maxInFlight ?? 1)) {
      const batch = this.takeBatch();
      this.inFlight += 1;
      let flushed: Promise<R[]>;
      try {
        flushed = this.flush(batch.map((entry) => entry.item));
      } catch (error) {
        flushed = Promise.reject(error);
      }
      flushed
        .then(
          (results) => batch.forEach((entry, index) => entry.resolve(results[index] as R)),
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.drain();
        });
    }
  }

  private takeBatch() {
    let bytes = 0;
    let count = 0;
    for (const entry of this.pending) {
      if (count > 0 && (count >= this.limits.maxItems || bytes + entry.size > this.limits.maxBytes)) break;
      bytes += entry.size;
      count += 1;
    }
    return this.pending.splice(0, count);
  }
}
