import pino, { Logger } from 'pino';
import { Writable } from 'node:stream';

/** A logger at `level` whose JSON lines the test reads back, as parsed objects, in `lines`. */
export function capturedLogger(level: pino.Level = 'info'): {
  readonly lines: Record<string, unknown>[];
  readonly logger: Logger;
} {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { lines, logger: pino({ level }, sink) };
}
