import { LogFn } from '@castlog/supervision';

type Close = () => Promise<void> | void;

/** What an opener has opened so far, closed in one place: newest first, once however often
 * `close` is called, each failure logged without keeping the rest open. */
export class Closers {
  private readonly opened: Close[] = [];
  private closing?: Promise<void>;

  constructor(private readonly log: LogFn) {}

  /** `value`, to be closed by `close`. */
  add<T>(value: T, close: Close): T {
    this.opened.push(close);
    return value;
  }

  /** `close` to run after everything else: what the opener was given and owns once it has opened. */
  last(close: Close): void {
    this.opened.unshift(close);
  }

  close(): Promise<void> {
    return (this.closing ??= this.closeAll());
  }

  /** `open`'s value; when it fails, closes what was added so far and rethrows. */
  async opening<T>(open: () => Promise<T>): Promise<T> {
    try {
      return await open();
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  private async closeAll(): Promise<void> {
    for (const close of this.opened.reverse()) {
      try {
        await close();
      } catch (error) {
        this.log('warn', `while closing: ${String(error)}`);
      }
    }
  }
}
