import { OFFSETS_CHANNEL } from '@castlog/read-model';
import { NotificationListener, Wakeup } from '@castlog/supervision';

/** Re-checks `check` whenever the projector announces a stored offset (PostgreSQL NOTIFY, heard
 * through the NotificationListener castlog itself uses) and at least every `recheckMs`, until it
 * answers a value other than undefined/false; fails at the deadline with `what` in the message.
 * Never a bare sleep. */
export async function until<T>(
  databaseUrl: string,
  what: string,
  check: () => Promise<T | undefined | false>,
  { timeoutMs = 20_000, recheckMs = 500 } = {},
): Promise<T> {
  const noticed = new Wakeup();
  const listener = new NotificationListener(
    databaseUrl,
    [OFFSETS_CHANNEL],
    { notice: () => noticed.ring(), listening: async () => noticed.ring(), lost: () => undefined },
    { component: 'test notices' },
  );
  await listener.start();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = await check();
      if (result !== undefined && result !== false) return result;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await noticed.wait(Math.min(recheckMs, left));
    }
  } finally {
    await listener.close();
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
