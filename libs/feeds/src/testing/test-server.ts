import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the server received, as the handler saw it. */
export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
}

/** A real HTTP server on a loopback address, for specs that fetch over the network. */
export interface TestServer {
  /** The server's origin, e.g. `http://127.0.0.1:40123`. */
  readonly origin: string;
  /** Every request received so far, in order. */
  readonly requests: readonly ReceivedRequest[];
  /** `origin` + path. */
  url(path: string): string;
  /** Closes the server and every connection still open (a handler that never answers). */
  close(): Promise<void>;
}

export type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** Starts a server on `host` (any 127.0.0.0/8 address works on Linux) and a port the system picks. */
export async function startTestServer(handler: Handler, host = '127.0.0.1'): Promise<TestServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    requests.push({ path: request.url ?? '', headers: request.headers });
    handler(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host}:${port}`;
  return {
    origin,
    requests,
    url: (path) => `${origin}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: one the system just handed out and took back. */
export async function closedPort(host = '127.0.0.1'): Promise<number> {
  const server = await startTestServer(() => undefined, host);
  await server.close();
  return Number(new URL(server.origin).port);
}
