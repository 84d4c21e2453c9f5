/** What /health/ready reports: ready, with the projection's version and lag, or the reason the
 * process is not. */
export type Readiness =
  | {
      readonly ready: true;
      readonly projectionVersion: number | undefined;
      readonly projectionLag: number;
      /** What an operator should know though the process serves: a part of it that looks stuck. */
      readonly details?: readonly string[];
    }
  | { readonly ready: false; readonly reason: string };

/** What the operations routes ask of the process. The runtime provides it (it knows the read
 * model, the event log and the metrics); the routes only turn it into HTTP answers. */
export abstract class OperationsReport {
  abstract readiness(): Promise<Readiness>;
  /** The Prometheus exposition text of every metric, refreshed for this scrape. */
  abstract metrics(): Promise<string>;
}
