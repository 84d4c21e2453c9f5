import { createHash } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { renderFeed, setOf } from './feed-fixture';
import type { FeedServerCommand, FeedServerMessage, FeedServerStats } from './feed-server';

const LAST_MODIFIED = new Date(Date.UTC(2026, 10, 24, 5)).toUTCString();

const requests: Record<string, number> = {};
let bytes = 0;
let inFlight = 0;
let maxInFlight = 0;
let maxInFlightOnePort = 0;
let inFlightMs = 0;
let busyMs = 0;
let changedAt = performance.now();

/** Adds the time since the last change at the current count to the integrals. */
const account = (): void => {
  const now = performance.now();
  inFlightMs += inFlight * (now - changedAt);
  if (inFlight > 0) busyMs += now - changedAt;
  changedAt = now;
};

function serve(port: { inFlight: number }, request: IncomingMessage, response: ServerResponse): void {
  account();
  inFlight += 1;
  port.inFlight += 1;
  maxInFlight = Math.max(maxInFlight, inFlight);
  maxInFlightOnePort = Math.max(maxInFlightOnePort, port.inFlight);
  response.once('close', () => {
    account();
    inFlight -= 1;
    port.inFlight -= 1;
  });
  const path = (request.url ?? '/').split('?')[0] as string;
  const set = setOf(path);
  requests[set] = (requests[set] ?? 0) + 1;
  if (request.method !== 'GET' || !path.endsWith('.xml')) {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    return;
  }
  const body = Buffer.from(renderFeed(path));
  const etag = `"${createHash('sha1').update(body).digest('base64url').slice(0, 16)}"`;
  if (request.headers['if-none-match'] === etag) {
    response.writeHead(304, { etag, 'last-modified': LAST_MODIFIED }).end();
    return;
  }
  bytes += body.length;
  response
    .writeHead(200, {
      'content-type': 'application/rss+xml; charset=utf-8',
      'content-length': body.length,
      etag,
      'last-modified': LAST_MODIFIED,
      'cache-control': 'max-age=300',
    })
    .end(body);
}

function listen(): Promise<Server> {
  const port = { inFlight: 0 };
  const server = createServer((request, response) => serve(port, request, response));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function stats(): FeedServerStats {
  account();
  const taken = {
    requests: { ...requests },
    bytes,
    maxInFlight,
    maxInFlightOnePort,
    inFlightMs,
    busyMs,
    atMs: performance.now(),
  };
  maxInFlight = inFlight;
  maxInFlightOnePort = 0;
  return taken;
}

async function main(): Promise<void> {
  const { hosts } = workerData as { hosts: number };
  const servers = await Promise.all(Array.from({ length: hosts }, () => listen()));
  const post = (message: FeedServerMessage) => parentPort?.postMessage(message);
  parentPort?.on('message', (command: FeedServerCommand) => {
    if (command.kind === 'stats') post({ kind: 'stats', id: command.id, stats: stats() });
    else {
      for (const server of servers) server.closeAllConnections();
      void Promise.all(servers.map((server) => new Promise((done) => server.close(done)))).then(() =>
        post({ kind: 'closed' }),
      );
    }
  });
  post({ kind: 'ready', ports: servers.map((server) => (server.address() as AddressInfo).port) });
}

void main();
