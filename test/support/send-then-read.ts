import { once } from 'node:events';
import { connect } from 'node:net';

export interface RawAnswer {
  readonly status: number;
  /** The status line and the headers, as sent. */
  readonly head: string;
  readonly body: string;
}

/** Sends one HTTP/1.1 request whole (the body with its Content-Length, or chunked), in pieces as a
 * client on a network sends it, and reads the answer only once it has sent everything, as Python's
 * http.client does (mygpoclient uses it). A server that answers and closes the connection while
 * the body still comes makes this fail as that client does: with a broken pipe or a reset. */
export async function sendThenRead(
  url: string,
  request: {
    readonly method: string;
    readonly path: string;
    readonly body: string;
    readonly headers?: Record<string, string>;
    readonly chunked?: boolean;
  },
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.pause();
  try {
    await once(socket, 'connect');
    const write = (data: string) =>
      new Promise<void>((resolve, reject) =>
        socket.write(data, (error) => (error ? reject(error) : resolve())),
      );
    const headers = {
      host: 'castlog',
      connection: 'close',
      ...request.headers,
      ...(request.chunked
        ? { 'transfer-encoding': 'chunked' }
        : { 'content-length': String(Buffer.byteLength(request.body)) }),
    };
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    await write(`${request.method} ${request.path} HTTP/1.1\r\n${lines.join('')}\r\n`);
    const piece = 256 * 1024;
    for (let at = 0; at < request.body.length; at += piece) {
      const part = request.body.slice(at, at + piece);
      await write(request.chunked ? `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n` : part);
    }
    if (request.chunked) await write('0\r\n\r\n');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.resume();
    await Promise.race([once(socket, 'end'), once(socket, 'error').then(([error]) => Promise.reject(error))]);
    const text = Buffer.concat(chunks).toString();
    const split = text.indexOf('\r\n\r\n');
    const head = text.slice(0, split);
    return { status: Number(head.split(' ')[1]), head, body: text.slice(split + 4) };
  } finally {
    socket.destroy();
  }
}
