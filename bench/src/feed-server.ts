import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

/** What the feed server has answered, from its start (counts) or since the last `stats()` (maxima). */
export interface FeedServerStats {
  /** Requests by the feeds' set (`a`, `b3`, `w`…, see `setOf`). */
  readonly requests: Record<string, number>;
  readonly bytes: number;
  /** Requests in flight at once: the most since the last `stats()`, overall and on one port. */
  readonly maxInFlight: number;
  readonly maxInFlightOnePort: number;
  /** ∫ requests in flight dt, ms (its difference over a window, divided by the window's length, is
   * the mean number in flight), and the time anything was in flight, ms. */
  readonly inFlightMs: number;
  readonly busyMs: number;
  /** performance.now() in the server's thread when these were taken (its clock is the process's). */
  readonly atMs: number;
}

/** What the worker posts. */
export type FeedServerMessage =
  | { readonly kind: 'ready'; readonly ports: readonly number[] }
  | { readonly kind: 'stats'; readonly id: number; readonly stats: FeedServerStats }
  | { readonly kind: 'closed' };

/** What the worker is asked. */
export type FeedServerCommand = { readonly kind: 'stats'; readonly id: number } | { readonly kind: 'close' };

export interface FeedServer {
  /** `http://127.0.0.1:<port>`, one per port. */
  readonly origins: readonly string[];
  stats(): Promise<FeedServerStats>;
  close(): Promise<void>;
}

/** The feeds' HTTP server (node:http on 127.0.0.1, `hosts` ports) in a worker thread of its own, so
 * that serving the feeds does not take the event loop castlog runs on in this process: remote
 * publishers' servers spend none of castlog's machine. Every path ending in `.xml` is a feed
 * (`renderFeed`). */
export function startFeedServer(hosts: number): Promise<FeedServer> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(join(__dirname, 'feed-server.worker.js'), { workerData: { hosts } });
    const waiting = new Map<number, (stats: FeedServerStats) => void>();
    let closed: (() => void) | undefined;
    let next = 0;
    worker.on('message', (message: FeedServerMessage) => {
      if (message.kind === 'ready') {
        resolve({
          origins: message.ports.map((port) => `http://127.0.0.1:${port}`),
          stats: () =>
            new Promise((answer) => {
              next += 1;
              waiting.set(next, answer);
              worker.postMessage({ kind: 'stats', id: next } satisfies FeedServerCommand);
            }),
          close: () =>
            new Promise((done) => {
              closed = done;
              worker.postMessage({ kind: 'close' } satisfies FeedServerCommand);
            }),
        });
      } else if (message.kind === 'stats') {
        waiting.get(message.id)?.(message.stats);
        waiting.delete(message.id);
      } else {
        void worker.terminate().then(() => closed?.());
      }
    });
    worker.once('error', reject);
  });
}

/** The difference of two snapshots: requests and bytes served between them, and the mean requests
 * in flight over the window (the maxima are the later snapshot's, since the earlier). */
export function statsBetween(before: FeedServerStats, after: FeedServerStats) {
  const windowMs = after.atMs - before.atMs;
  const requests: Record<string, number> = {};
  for (const [set, count] of Object.entries(after.requests)) {
    const added = count - (before.requests[set] ?? 0);
    if (added > 0) requests[set] = added;
  }
  const served = Object.values(requests).reduce((sum, count) => sum + count, 0);
  return {
    seconds: Number((windowMs / 1000).toFixed(3)),
    requests,
    bytes: after.bytes - before.bytes,
    mean_server_ms: served > 0 ? Number(((after.inFlightMs - before.inFlightMs) / served).toFixed(3)) : 0,
    mean_in_flight: windowMs > 0 ? Number(((after.inFlightMs - before.inFlightMs) / windowMs).toFixed(2)) : 0,
    busy_fraction: windowMs > 0 ? Number(((after.busyMs - before.busyMs) / windowMs).toFixed(3)) : 0,
    max_in_flight: after.maxInFlight,
    max_in_flight_one_port: after.maxInFlightOnePort,
  };
}
