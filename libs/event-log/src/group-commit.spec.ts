import { GroupCommit } from './group-commit';

/** A flush the spec completes by hand: it records each batch and answers when told to. */
class ManualFlush {
  readonly batches: string[][] = [];
  private readonly pending: { resolve: (results: string[]) => void; reject: (error: unknown) => void }[] = [];

  readonly flush = (items: string[]): Promise<string[]> => {
    this.batches.push(items);
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  };

  /** Completes the oldest flush in hand, answering `result:<item>` for each item. */
  succeed(): void {
    const batch = this.batches[this.batches.length - this.pending.length]!;
    this.pending.shift()!.resolve(batch.map((item) => `result:${item}`));
  }

  fail(error: Error): void {
    this.pending.shift()!.reject(error);
  }

  get inFlight(): number {
    return this.pending.length;
  }
}

/** Lets queued promise callbacks and the flush loop run (no timers involved). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const groupCommit = (
  flush: ManualFlush,
  limits: Partial<{ maxItems: number; maxBytes: number; maxInFlight: number; gatherTurn: boolean }> = {},
) =>
  new GroupCommit<string, string>(flush.flush, {
    maxItems: limits.maxItems ?? 1000,
    maxBytes: limits.maxBytes ?? 1_000_000,
    sizeOf: (item) => item.length,
    maxInFlight: limits.maxInFlight,
    gatherTurn: limits.gatherTurn,
  });

/** Tracks a promise's outcome without awaiting it. */
function track<T>(promise: Promise<T>) {
  const state: { value?: T; error?: unknown; settled: boolean } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { value, settled: true }),
    (error: unknown) => Object.assign(state, { error, settled: true }),
  );
  return state;
}

describe('GroupCommit', () => {
  describe('batching', () => {
    it('flushes the first submit at once, and gathers submits made meanwhile into the next flush', async () => {
      const flush = new ManualFlush();
      const commit = groupCommit(flush);

      const first = track(commit.submit(['a']));
      expect(flush.batches).toEqual([['a']]);
      const later = [commit.submit(['b']), commit.submit(['c', 'd']), commit.submit(['e'])].map(track);
      await settle();
      expect(flush.batches).toEqual([['a']]);

      flush.succeed();
      await settle();
      expect(first.value).toEqual(['result:a']);
      expect(flush.batches).toEqual([['a'], ['b', 'c', 'd', 'e']]);
      expect(later.some((state) => state.settled)).toBe(false);

      flush.succeed();
      await settle();
      expect(later.map((state) => state.value)).toEqual([
        ['result:b'],
        ['result:c', 'result:d'],
        ['result:e'],
      ]);
    });

    it('flushes again at once after going idle', async () => {
      const flush = new ManualFlush();
      const commit = groupCommit(flush);
      const first = commit.submit(['a']);
      flush.succeed();
      await first;

      const second = commit.submit(['b']);

      expect(flush.batches).toEqual([['a'], ['b']]);
      flush.succeed();
      await expect(second).resolves.toEqual(['result:b']);
    });

    it('answers an empty submit with no results and no flush', async () => {
      const flush = new ManualFlush();
      await expect(groupCommit(flush).submit([])).resolves.toEqual([]);
      expect(flush.batches).toEqual([]);
    });
  });

  describe('limits', () => {
    it('puts at most maxItems in one flush, in submit order', async () => {
      const flush = new ManualFlush();
      const commit = groupCommit(flush, { maxItems: 2 });

      const held = commit.submit(['a']);
      const one = commit.submit(['b', 'c', 'd']);
      const two = commit.submit(['e', 'f']);
      for (let i = 0; i < 4; i += 1) {
        await settle();
        flush.succeed();
      }

      await expect(Promise.all([held, one, two])).resolves.toEqual([
        ['result:a'],
        ['result:b', 'result:c', 'result:d'],
        ['result:e', 'result:f'],
      ]);
      expect(flush.batches).toEqual([['a'], ['b', 'c'], ['d', 'e'], ['f']]);
    });

    it('keeps a flush within maxBytes, and sends an item larger than maxBytes alone', async () => {
      const flush = new ManualFlush();
      const commit = groupCommit(flush, { maxBytes: 10 });

      const results = [
        commit.submit(['held']),
        commit.submit(['aaaa', 'bbbb']),
        commit.submit(['cc', 'dddddddddddddddd', 'ee']),
        commit.submit(['ffffffffff']),
      ];
      for (let i = 0; i < 5; i += 1) {
        await settle();
        flush.succeed();
      }
      await Promise.all(results);

      expect(flush.batches).toEqual([
        ['held'],
        ['aaaa', 'bbbb', 'cc'],
        ['dddddddddddddddd'],
        ['ee'],
        ['ffffffffff'],
      ]);
      for (const batch of flush.batches) {
        const bytes = batch.reduce((sum, item) => sum + item.length, 0);
        expect(batch.length === 1 || bytes <= 10).toBe(true);
      }
    });
  });

  describe('results and failures', () => {
    it('gives each caller its own results, in the order of its items', async () => {
      const flush = new ManualFlush();
      const commit = groupCommit(flush);

      const held = commit.submit(['x']);
      const calls = [['a', 'b'], ['c'], ['d', 'e', 'f']].map((items) => commit.submit(items));
      flush.succeed();
      await settle();
      flush.succeed();

      await expect(held).resolves.toEqual(['result:x']);
      await expect(Promise.all(calls)).resolves.toEqual([
        ['result:a', 'result:b'],
        ['result:c'],
        ['result:d', 'result:e', 'result:f'],
      ]);
    });

    it("rejects only the failed flush's callers, and the next batch still goes", async () => {
      const flush = new ManualFlush();
      const commit = groupCommit(flush);

      const held = track(commit.submit(['a']));
      const failing = [commit.submit(['b']), commit.submit(['c', 'd'])].map(track);
      flush.succeed();
      await settle();
      expect(flush.batches).toEqual([['a'], ['b', 'c', 'd']]);
      const next = track(commit.submit(['e']));

      flush.fail(new Error('broker unavailable'));
      await settle();

      expect(held.value).toEqual(['result:a']);
      for (const state of failing) expect(state.error).toEqual(new Error('broker unavailable'));
      expect(next.settled).toBe(false);
      expect(flush.batches).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
      flush.succeed();
      await settle();
      expect(next.value).toEqual(['result:e']);
    });

    it('flushes again at once after a failed flush left it idle', async () => {
      const flush = new ManualFlush();
      const commit = groupCommit(flush);
      const failed = commit.submit(['a']);
      flush.fail(new Error('broker unavailable'));
      await expect(failed).rejects.toThrow('broker unavailable');

      const retried = commit.submit(['a']);

      expect(flush.inFlight).toBe(1);
      flush.succeed();
      await expect(retried).resolves.toEqual(['result:a']);
    });
  });
  describe('several flushes in flight, gathering a turn', () => {
    it('runs up to maxInFlight flushes at once and gathers the rest into the next free one', async () => {
      const flush = new ManualFlush();
      const commit = groupCommit(flush, { maxInFlight: 2, maxBytes: 1 });
      const results = [
        commit.submit(['a']),
        commit.submit(['b']),
        commit.submit(['c']),
        commit.submit(['d']),
      ].map(track);
      expect(flush.batches).toEqual([['a'], ['b']]);
      expect(flush.inFlight).toBe(2);
      flush.succeed();
      await settle();
      expect(flush.batches).toEqual([['a'], ['b'], ['c']]);
      expect(results[0]).toEqual({ value: ['result:a'], settled: true });
      flush.succeed();
      flush.succeed();
      await settle();
      flush.succeed();
      await settle();
      expect(flush.batches).toEqual([['a'], ['b'], ['c'], ['d']]);
      expect(results.map((r) => r.value)).toEqual([['result:a'], ['result:b'], ['result:c'], ['result:d']]);
    });

    it('with gatherTurn, puts the submits of one turn into one flush although a flush is free', async () => {
      const flush = new ManualFlush();
      const commit = groupCommit(flush, { maxInFlight: 4, gatherTurn: true });
      const results = [commit.submit(['a']), commit.submit(['b', 'c'])].map(track);
      expect(flush.batches).toEqual([]);
      await settle();
      expect(flush.batches).toEqual([['a', 'b', 'c']]);
      flush.succeed();
      await settle();
      expect(results.map((r) => r.value)).toEqual([['result:a'], ['result:b', 'result:c']]);
    });

    it('rejects the callers of a flush that throws before answering a promise, and keeps going', async () => {
      let calls = 0;
      const commit = new GroupCommit<string, string>(
        (items) => {
          calls += 1;
          if (calls === 1) throw new Error('at once');
          return Promise.resolve(items.map((item) => `ok:${item}`));
        },
        { maxItems: 1, maxBytes: 100, sizeOf: () => 1 },
      );
      const [first, second] = [track(commit.submit(['a'])), track(commit.submit(['b']))];
      await settle();
      expect(first.error).toEqual(new Error('at once'));
      expect(second.value).toEqual(['ok:b']);
    });
  });
});
