/** A dependency that is out of reach, as the process last saw it. */
export interface Outage {
  readonly component: string;
  /** Epoch ms of the first failure of this outage. */
  readonly since: number;
  /** The latest failure's message. */
  readonly reason: string;
}

export interface HealthObserver {
  lost(component: string): void;
  restored(component: string, outageMs: number): void;
}

/** What this process knows of its dependencies: each supervised connection reports when it is
 * lost and when it is back. `/health/ready` names the outages; metrics count the transitions. */
export class DependencyHealth {
  private readonly outages = new Map<string, { since: number; reason: string }>();
  private readonly observers = new Set<HealthObserver>();

  lost(component: string, error: unknown): void {
    const reason = messageOf(error);
    const known = this.outages.get(component);
    if (known) {
      known.reason = reason;
      return;
    }
    this.outages.set(component, { since: Date.now(), reason });
    for (const observer of this.observers) observer.lost(component);
  }

  restored(component: string): void {
    const known = this.outages.get(component);
    if (!known) return;
    this.outages.delete(component);
    for (const observer of this.observers) observer.restored(component, Date.now() - known.since);
  }

  isDown(component: string): boolean {
    return this.outages.has(component);
  }

  current(): Outage[] {
    return [...this.outages].map(([component, { since, reason }]) => ({ component, since, reason }));
  }

  observe(observer: HealthObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }
}

export const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message || error.name : String(error);
