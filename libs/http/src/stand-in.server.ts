import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorBody } from './errors';

export interface StandIn {
  /** The port it listens on (the one asked for, or the one the system gave for port 0). */
  readonly port: number;
  /** What the answers name as the reason, from now on. */
  setReason(reason: string): void;
  /** Stops listening and closes every connection, so the app can listen on the same port. */
  close(): Promise<void>;
}

/** What HOST:PORT answers while the app cannot start because a dependency is out of reach: every
 * request 503 with Retry-After and the contract's error body, `/health/ready` naming the reason,
 * and `/health/live` 200, since the process is alive and will start by itself. Clients and load
 * balancers see an unavailable service, not a refused connection. */
export async function listenAsStandIn(
  host: string,
  port: number,
  retryAfterSeconds: number,
  reason: string,
): Promise<StandIn> {
  let current = reason;
  const server: Server = createServer((request, response) => {
    // The body is not read: no route of the stand-in takes one.
    request.resume();
    const path = request.url?.split('?')[0];
    const live = (request.method === 'GET' || request.method === 'HEAD') && path === '/health/live';
    const ready = path === '/health/ready';
    const [status, body, headers] = live
      ? [200, { status: 'ok' }, {}]
      : [
          503,
          errorBody(503, ready ? `starting: ${current}` : undefined),
          { 'retry-after': String(retryAfterSeconds) },
        ];
    // Not kept alive: the app takes the port over once it starts, and a client's next request then
    // goes to the app on a new connection rather than to one the stand-in is closing.
    response.writeHead(status, {
      ...headers,
      'content-type': 'application/json; charset=utf-8',
      connection: 'close',
    });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    setReason: (next) => (current = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
