import { Client } from 'pg';

/** Re-checks `check` whenever the projector announces a stored offset (PostgreSQL NOTIFY) and at
 * least every `recheckMs`, until it answers a value other than undefined/false; fails at the
 * deadline with `what` in the message. Never a bare sleep. */
export async function until<T>(
  databaseUrl: string,
  what: string,
  check: () => Promise<T | undefined | false>,
  { timeoutMs = 20_000, recheckMs = 500 } = {},
): Promise<T> {
  const listener = new Client({ connectionString: databaseUrl });
  let wake: () => void = () => undefined;
  listener.on('notification', () => wake());
  await listener.connect();
  try {
    await listener.query('LISTEN castlog_offsets');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = await check();
      if (result !== undefined && result !== false) return result;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(recheckMs, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    await listener.end();
  }
}

/** Re-checks `check` every `everyMs` until it answers a value other than undefined/false; fails at
 * the deadline with `what` in the message. For waits where the database itself may be down, so
 * `until`'s notifications cannot be heard. */
export async function poll<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 60_000, everyMs = 200 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check();
    if (result !== undefined && result !== false) return result;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
