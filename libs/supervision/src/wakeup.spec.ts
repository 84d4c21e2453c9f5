import { Wakeup } from './wakeup';

describe('Wakeup', () => {
  it('a ring before the wait ends the next wait at once, and only that one', async () => {
    const wakeup = new Wakeup();
    wakeup.ring();
    await wakeup.wait();
    let ended = false;
    const waiting = wakeup.wait().then(() => (ended = true));
    await Promise.resolve();
    expect(ended).toBe(false);
    wakeup.ring();
    await waiting;
    expect(ended).toBe(true);
  });

  it('ends when its signal aborts', async () => {
    const stopped = new AbortController();
    const waiting = new Wakeup().wait(undefined, stopped.signal);
    stopped.abort();
    await expect(waiting).resolves.toBeUndefined();
  });
});
