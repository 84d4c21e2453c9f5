import { AsyncLocalStorage, createHook } from 'node:async_hooks';

const tracked = new AsyncLocalStorage<true>();
const pending = new Set<number>();
let tracking = false;
const hook = createHook({
  init: (id, type) => {
    if (type === 'Timeout' && tracked.getStore()) pending.add(id);
  },
  destroy: (id) => pending.delete(id),
});

/** Runs `work` and answers its outcome (its value, or the error it failed with) with how many of the
 * timers it started, itself or through anything it called, are still pending (neither fired nor
 * cleared) once it has settled. Timers started elsewhere meanwhile are not counted. One call at a
 * time: the pending set and the hook are shared, so a second call meanwhile is refused. */
export async function timersLeftBy<T>(
  work: () => Promise<T>,
): Promise<{ value?: T; error?: Error; pendingTimers: number }> {
  if (tracking) throw new Error('timersLeftBy is already tracking a call');
  tracking = true;
  hook.enable();
  pending.clear();
  try {
    const outcome = await tracked.run(true, work).then(
      (value) => ({ value }),
      (error: Error) => ({ error }),
    );
    // Destroy hooks run after the current tick.
    await new Promise((resolve) => setImmediate(resolve));
    return { ...outcome, pendingTimers: pending.size };
  } finally {
    hook.disable();
    tracking = false;
  }
}
