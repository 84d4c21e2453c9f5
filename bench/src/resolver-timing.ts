import { FeedCatalog, FeedFetcher } from '@castlog/feeds';
import { round } from './stats';

interface Totals {
  count: number;
  ms: number;
}

/** What the resolver's calls took so far (wall time, in this process: castlog runs here). */
export interface ResolverTimes {
  readonly fetch: Totals;
  readonly record: Totals;
  readonly claim: Totals & { feeds: number };
  readonly learn: Totals;
  /** ∫ fetches in flight dt (ms), and the most in flight at once since the last snapshot. */
  readonly inFlightMs: number;
  readonly maxInFlight: number;
  readonly atMs: number;
}

type Method = (...args: never[]) => Promise<unknown>;

/** Times FeedFetcher.fetch, FeedCatalog.record, claimDue and learn by wrapping their prototypes (the
 * resolver calls them on instances castlog creates); `restore` puts them back. Wall times: a call's
 * time includes its waits for the event loop and the pool, which is where a busy process shows. */
export function timeResolver(): { snapshot(): ResolverTimes; restore(): void } {
  const totals = {
    fetch: { count: 0, ms: 0 },
    record: { count: 0, ms: 0 },
    claim: { count: 0, ms: 0, feeds: 0 },
    learn: { count: 0, ms: 0 },
  };
  let inFlight = 0;
  let maxInFlight = 0;
  let inFlightMs = 0;
  let changedAt = performance.now();
  const account = () => {
    const now = performance.now();
    inFlightMs += inFlight * (now - changedAt);
    changedAt = now;
  };
  const restores: (() => void)[] = [];
  const wrap = <T extends object>(
    prototype: T,
    name: keyof T & string,
    into: Totals,
    around?: { before(): void; after(result: unknown): void },
  ) => {
    const original = prototype[name] as unknown as Method;
    (prototype as Record<string, unknown>)[name] = async function (this: unknown, ...args: never[]) {
      const started = performance.now();
      around?.before();
      let result: unknown;
      try {
        result = await original.apply(this, args);
        return result;
      } finally {
        into.count += 1;
        into.ms += performance.now() - started;
        around?.after(result);
      }
    };
    restores.push(() => {
      (prototype as Record<string, unknown>)[name] = original;
    });
  };
  wrap(FeedFetcher.prototype, 'fetch', totals.fetch, {
    before: () => {
      account();
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
    },
    after: () => {
      account();
      inFlight -= 1;
    },
  });
  wrap(FeedCatalog.prototype, 'record', totals.record);
  wrap(FeedCatalog.prototype, 'claimDue', totals.claim, {
    before: () => undefined,
    after: (claimed) => {
      totals.claim.feeds += Array.isArray(claimed) ? claimed.length : 0;
    },
  });
  wrap(FeedCatalog.prototype, 'learn', totals.learn);
  return {
    snapshot: () => {
      account();
      const taken: ResolverTimes = {
        fetch: { ...totals.fetch },
        record: { ...totals.record },
        claim: { ...totals.claim },
        learn: { ...totals.learn },
        inFlightMs,
        maxInFlight,
        atMs: performance.now(),
      };
      maxInFlight = inFlight;
      return taken;
    },
    restore: () => restores.forEach((restore) => restore()),
  };
}

/** The calls between two snapshots: how many, their mean wall time, and the fetches in flight. */
export function timesBetween(before: ResolverTimes, after: ResolverTimes) {
  const mean = (key: 'fetch' | 'record' | 'claim' | 'learn') => {
    const count = after[key].count - before[key].count;
    return { count, mean_ms: count > 0 ? round((after[key].ms - before[key].ms) / count, 2) : Number.NaN };
  };
  const windowMs = after.atMs - before.atMs;
  const claims = after.claim.count - before.claim.count;
  return {
    fetch: mean('fetch'),
    record: mean('record'),
    claim: {
      ...mean('claim'),
      feeds_per_claim: claims > 0 ? round((after.claim.feeds - before.claim.feeds) / claims, 1) : Number.NaN,
    },
    learn: mean('learn'),
    mean_fetches_in_flight: windowMs > 0 ? round((after.inFlightMs - before.inFlightMs) / windowMs, 2) : 0,
    max_fetches_in_flight: after.maxInFlight,
  };
}
