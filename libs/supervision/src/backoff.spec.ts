import { Backoff, retry } from './backoff';

describe('Backoff', () => {
  it('grows each delay up to twice the last ceiling, never past the cap', () => {
    const backoff = new Backoff({ initialMs: 100, maxMs: 1_000 });
    const ceilings = [100, 200, 400, 800, 1_000, 1_000, 1_000];
    for (const ceiling of ceilings) {
      const delay = backoff.next();
      expect(delay).toBeGreaterThanOrEqual(50);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
    expect(backoff.failures).toBe(ceilings.length);
  });

  it('starts over after a reset', () => {
    const backoff = new Backoff({ initialMs: 100, maxMs: 10_000 });
    for (let i = 0; i < 10; i += 1) backoff.next();
    backoff.reset();
    expect(backoff.failures).toBe(0);
    expect(backoff.next()).toBeLessThanOrEqual(100);
  });
});

describe('retry', () => {
  it('runs the work again after each failure until it succeeds', async () => {
    let calls = 0;
    const failures: number[] = [];
    const result = await retry(
      async () => {
        calls += 1;
        if (calls < 4) throw new Error(`failure ${calls}`);
        return 'done';
      },
      { initialMs: 1, maxMs: 2, onFailure: (_error, count) => void failures.push(count) },
    );
    expect(result).toBe('done');
    expect(failures).toEqual([1, 2, 3]);
  });

  it('rethrows a failure that is not retryable, without waiting', async () => {
    let calls = 0;
    const waited: number[] = [];
    const running = retry(
      async () => {
        calls += 1;
        throw new Error(calls < 3 ? 'passing' : 'final');
      },
      {
        initialMs: 1,
        maxMs: 2,
        retryable: (error) => (error as Error).message === 'passing',
        onFailure: (_error, count) => void waited.push(count),
      },
    );
    await expect(running).rejects.toThrow('final');
    expect({ calls, waited }).toEqual({ calls: 3, waited: [1, 2] });
  });

  it('waits for what onFailure answers before the next attempt', async () => {
    const events: string[] = [];
    let calls = 0;
    await retry(
      async () => {
        events.push(`attempt ${++calls}`);
        if (calls < 3) throw new Error('not yet');
      },
      {
        initialMs: 1,
        maxMs: 1,
        onFailure: async (_error, count) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          events.push(`handled ${count}`);
        },
      },
    );
    expect(events).toEqual(['attempt 1', 'handled 1', 'attempt 2', 'handled 2', 'attempt 3']);
  });

  it('gives up with undefined once aborted, also while waiting', async () => {
    const stop = new AbortController();
    let calls = 0;
    const running = retry(
      async () => {
        calls += 1;
        throw new Error('down');
      },
      { initialMs: 60_000, maxMs: 60_000, signal: stop.signal },
    );
    stop.abort();
    await expect(running).resolves.toBeUndefined();
    expect(calls).toBe(1);
  });

  it('rethrows the last failure once the attempts are spent, without waiting after it', async () => {
    let calls = 0;
    const waits: number[] = [];
    const running = retry(
      async () => {
        calls += 1;
        throw new Error(`failure ${calls}`);
      },
      { initialMs: 1, maxMs: 2, attempts: 3, wait: async (delayMs) => void waits.push(delayMs) },
    );
    await expect(running).rejects.toThrow('failure 3');
    expect({ calls, waits: waits.length }).toEqual({ calls: 3, waits: 2 });
  });

  it('spends the delays in the given wait, and stops once the work is no longer wanted', async () => {
    let calls = 0;
    let wanted = true;
    const waits: number[] = [];
    const running = retry(
      async () => {
        calls += 1;
        throw new Error('down');
      },
      {
        initialMs: 100,
        maxMs: 100,
        wanted: () => wanted,
        wait: async (delayMs) => {
          waits.push(delayMs);
          if (waits.length === 2) wanted = false;
        },
      },
    );
    await expect(running).resolves.toBeUndefined();
    expect(calls).toBe(2);
    expect(waits).toHaveLength(2);
    for (const delayMs of waits) expect(delayMs).toBeGreaterThanOrEqual(50);
  });
});
