/** What the HTTP app reports of every answered request. The process's metrics provide it (the
 * runtime binds its Prometheus registry here), so the HTTP layer needs nothing of the runtime. */
export abstract class RequestMetrics {
  /** One answered request: its method, route template, status and duration. */
  abstract observeRequest(method: string, route: string, status: number, seconds: number): void;
}
