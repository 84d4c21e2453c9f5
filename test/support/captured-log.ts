import pino, { Logger } from 'pino';
import { Writable } from 'node:stream';

type LogLine = Record<string, unknown>;

/** A logger at `level` whose JSON lines the test reads back, as parsed objects, in `lines`, or
 * waits for with `lineWhere`. */
export function capturedLogger(level: pino.Level = 'info'): {
  readonly lines: LogLine[];
  readonly logger: Logger;
  /** The first line `matches` accepts, once it is logged. */
  readonly lineWhere: (matches: (line: LogLine) => boolean) => Promise<LogLine>;
} {
  const lines: LogLine[] = [];
  const waiting: { matches: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) {
        if (!text) continue;
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        for (const waiter of waiting.filter(({ matches }) => matches(line))) waiter.resolve(line);
      }
      callback();
    },
  });
  const lineWhere = (matches: (line: LogLine) => boolean) =>
    new Promise<LogLine>((resolve) => {
      const logged = lines.find(matches);
      if (logged) resolve(logged);
      else waiting.push({ matches, resolve });
    });
  return { lines, logger: pino({ level }, sink), lineWhere };
}
