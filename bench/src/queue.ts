/** A bounded async queue: `push` waits while full, `shift` waits while empty, `undefined` once
 * closed and drained. */
export class BoundedQueue<T> {
  private readonly items: T[] = [];
  private readonly waiting: (() => void)[] = [];
  private closed = false;

  constructor(private readonly capacity: number) {}

  private wakeAll(): void {
    for (const wake of this.waiting.splice(0)) wake();
  }

  private wait(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** False when the queue was closed (by a consumer that failed): stop producing. */
  async push(item: T): Promise<boolean> {
    while (this.items.length >= this.capacity && !this.closed) await this.wait();
    if (this.closed) return false;
    this.items.push(item);
    this.wakeAll();
    return true;
  }

  async shift(): Promise<T | undefined> {
    for (;;) {
      if (this.items.length > 0) {
        const item = this.items.shift() as T;
        this.wakeAll();
        return item;
      }
      if (this.closed) return undefined;
      await this.wait();
    }
  }

  close(): void {
    this.closed = true;
    this.wakeAll();
  }
}
