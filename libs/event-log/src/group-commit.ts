/** Gathers concurrent calls into one flush: while a flush is in flight, new items wait and go out
 * together in the next one. Each caller gets its own result back. */
export class GroupCommit<T, R> {
  private pending: { item: T; size: number; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    private readonly limits: { maxItems: number; maxBytes: number; sizeOf: (item: T) => number },
  ) {}

  submit(items: readonly T[]): Promise<R[]> {
    const results = items.map(
      (item) =>
        new Promise<R>((resolve, reject) =>
          this.pending.push({ item, size: this.limits.sizeOf(item), resolve, reject }),
        ),
    );
    void this.drain();
    return Promise.all(results);
  }

  private async drain(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.takeBatch();
        try {
          const results = await this.flush(batch.map((entry) => entry.item));
          batch.forEach((entry, index) => entry.resolve(results[index] as R));
        } catch (error) {
          batch.forEach((entry) => entry.reject(error));
        }
      }
    } finally {
      this.flushing = false;
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
