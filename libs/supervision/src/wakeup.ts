/** A wake-up call that is not lost when it comes before the wait: `ring` ends the current `wait`, or
 * the next one at once. What a loop that reads, then sleeps until told there is more, waits on. */
export class Wakeup {
  private rung = false;
  private wake?: () => void;

  ring(): void {
    this.rung = true;
    this.wake?.();
  }

  /** Resolves at the first ring since the last wait ended (at once if it came meanwhile), after
   * `ms` when given, or once `signal` aborts; leaves no timer or listener behind. */
  async wait(ms?: number, signal?: AbortSignal): Promise<void> {
    if (!this.rung && !signal?.aborted) {
      let timer: NodeJS.Timeout | undefined;
      let done = () => undefined as void;
      const ended = new Promise<void>((resolve) => (done = resolve));
      this.wake = done;
      signal?.addEventListener('abort', done, { once: true });
      if (ms !== undefined) timer = setTimeout(done, ms);
      try {
        await ended;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.wake = undefined;
      }
    }
    this.rung = false;
  }
}
