/** What the resolver has done lately, for the process's readiness details and metrics: when a fetch
 * last ended (or the resolver last found nothing due), and the catalog's backlog as last measured. */
export class ResolverProgress {
  private running = false;
  private lastProgressMs = 0;
  private backlog = { known: 0, due: 0, oldestDueMs: null as number | null };

  /** The resolver runs in this process from `nowMs` on. */
  started(nowMs: number): void {
    this.running = true;
    this.lastProgressMs = nowMs;
  }

  stopped(): void {
    this.running = false;
  }

  /** A fetch ended and was recorded, or nothing was due: the resolver is not stuck at `nowMs`. */
  progressed(nowMs: number): void {
    this.lastProgressMs = Math.max(this.lastProgressMs, nowMs);
  }

  measured(backlog: { known: number; due: number; oldestDueMs: number | null }): void {
    this.backlog = backlog;
  }

  /** The catalog's size and backlog as last measured, while the resolver runs here. */
  current(): { known: number; due: number; oldestDueMs: number | null } | undefined {
    return this.running ? this.backlog : undefined;
  }

  /** Says why the resolver looks stuck at `nowMs`: feeds are due and no fetch has ended for longer
   * than `thresholdMs`. Undefined when it is not, or does not run in this process. */
  stuck(nowMs: number, thresholdMs: number): string | undefined {
    if (!this.running || this.backlog.due === 0) return undefined;
    const idleMs = nowMs - this.lastProgressMs;
    if (idleMs <= thresholdMs) return undefined;
    return (
      `feed resolver: no fetch has ended for ${Math.round(idleMs / 1000)} s while ` +
      `${this.backlog.due} ${this.backlog.due === 1 ? 'feed is' : 'feeds are'} due`
    );
  }
}
