import { HEARTBEAT_MS } from './kafka-options';

/** Waits for `work`, heartbeating meanwhile so the group keeps this member. The wait for the next
 * heartbeat ends with the work: a timer left running would hold a stopping process for seconds. */
export async function heartbeatWhile(
  work: Promise<unknown> | undefined,
  heartbeat: () => Promise<void>,
  intervalMs = HEARTBEAT_MS,
): Promise<void> {
  if (!work) return;
  let done = false;
  const settled = work.finally(() => (done = true));
  while (!done) {
    // A plain timer, cleared when the work ends first: an aborted sleep would build an AbortError,
    // stack trace and all, for every batch.
    let timer: NodeJS.Timeout | undefined;
    const beat = new Promise<void>((resolve) => (timer = setTimeout(resolve, intervalMs)));
    try {
      await Promise.race([settled, beat]);
    } finally {
      clearTimeout(timer);
    }
    if (!done) await heartbeat();
  }
}
