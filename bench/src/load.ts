import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

/** What one load run sends: `concurrency` clients, each in a closed loop (next request when the
 * previous answered), on keep-alive connections to 127.0.0.1 only. */
export interface LoadSpec {
  readonly port: number;
  readonly concurrency: number;
  /** Measured window after the warm-up; no request starts after it. */
  readonly durationMs: number;
  /** Requests started before this are sent but not recorded. */
  readonly warmupMs: number;
  /** Per-client headers, cycled by client index (e.g. one Bearer token per user). */
  readonly clientHeaders: readonly Record<string, string>[];
  readonly request: AddRequests | SyncRequests | GetRequests;
  readonly expectStatus: number;
}

/** POST `path` with `items` new feeds per request (unique urls, so every item adds a subscription). */
export interface AddRequests {
  readonly kind: 'add';
  readonly path: string;
  readonly items: number;
  /** Makes the feed urls of this run unique. */
  readonly runId: string;
  /** Feed urls shared by every client instead: request `s` of each client adds the feed
   * `<feedBases[s % length]>/r<s>/i<item>.xml` (each user still subscribes to a new feed with every
   * item, and all users to the same feeds in the same order, so the run's feeds can be known ahead). */
  readonly feedBases?: readonly string[];
}

/** POST `path` with `actions` sync-draft subscribe actions per request, each with a new feed url and
 * a new action_id (so every action adds a subscription, as AddRequests' items do). */
export interface SyncRequests {
  readonly kind: 'sync';
  readonly path: string;
  readonly actions: number;
  /** Makes the feed urls of this run unique. */
  readonly runId: string;
}

/** GET the paths in turn. */
export interface GetRequests {
  readonly kind: 'get';
  readonly paths: readonly string[];
}

export interface LoadResult {
  /** Latency of every request started in the measured window, ms. */
  readonly latenciesMs: Float64Array;
  /** From the end of the warm-up until the last measured request answered, ms. */
  readonly elapsedMs: number;
  readonly measured: number;
  /** Measured requests whose status was not `expectStatus` (or that failed outright). */
  readonly errors: number;
  readonly statuses: Record<string, number>;
  readonly firstError?: string;
}

/** What the worker posts: once its warm-up ends, then its result. */
export type LoadMessage =
  { readonly kind: 'measuring' } | { readonly kind: 'result'; readonly result: LoadResult };

/** Runs the load in a worker thread, so the clients do not share the server's event loop.
 * `onMeasuring` runs when the warm-up ends and the measured window starts. */
export function runLoad(spec: LoadSpec, onMeasuring?: () => void): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(join(__dirname, 'load.worker.js'), { workerData: spec });
    let result: LoadResult | undefined;
    worker.on('message', (message: LoadMessage) => {
      if (message.kind === 'measuring') onMeasuring?.();
      else result = message.result;
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (result) resolve(result);
      else reject(new Error(`load worker exited with code ${code} and no result`));
    });
  });
}
