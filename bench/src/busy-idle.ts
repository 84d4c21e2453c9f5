import { loadavg } from 'node:os';
import { round, Spread, spreadOf } from './stats';

/** What a round of the feeds scenario's write rounds measures: the baseline, and castlog with the
 * feed resolver idle (nothing due) or busy (a fresh batch of feeds being resolved). */
export type Condition = 'baseline' | 'idle' | 'busy';

/** One round: the three measured back to back, in `order`. */
export interface ConditionRound<T> {
  readonly round: number;
  readonly order: readonly Condition[];
  /** The machine's 1-minute load average when the round started. */
  readonly load_1m: number;
  readonly baseline: T;
  readonly idle: T;
  readonly busy: T;
}

/** Round `n`'s order: baseline, idle, busy in odd rounds and the reverse in even ones, so that a
 * machine whose speed drifts during the run weighs on the three alike over two rounds. */
export const conditionOrder = (n: number): readonly Condition[] =>
  n % 2 === 1 ? ['baseline', 'idle', 'busy'] : ['busy', 'idle', 'baseline'];

/** Measures the three conditions in `rounds` rounds (`conditionOrder`), as `alternate` does two. */
export async function alternateConditions<T>(
  rounds: number,
  measure: (condition: Condition, round: number) => Promise<T>,
): Promise<ConditionRound<T>[]> {
  const done: ConditionRound<T>[] = [];
  for (let n = 1; n <= rounds; n += 1) {
    const order = conditionOrder(n);
    const load1m = Number((loadavg()[0] ?? Number.NaN).toFixed(2));
    const results: Partial<Record<Condition, T>> = {};
    for (const condition of order) results[condition] = await measure(condition, n);
    done.push({
      round: n,
      order,
      load_1m: load1m,
      baseline: results.baseline as T,
      idle: results.idle as T,
      busy: results.busy as T,
    });
  }
  return done;
}

/** The write ratio (castlog / baseline, requests a second) of each round with the resolver idle
 * and busy, against the round's one baseline. */
export interface RoundRatios {
  readonly idle: number;
  readonly busy: number;
}

export interface BusyIdleVerdict {
  readonly idle: Spread;
  readonly busy: Spread;
  /** The median idle ratio less the median busy ratio (positive: the busy rounds are slower). */
  readonly drop: number;
  /** The idle rounds' spread: their highest ratio less their lowest. */
  readonly noise: number;
  readonly met: boolean;
  /** Each round's idle ratio less its busy ratio. */
  readonly paired_drop: Spread;
}

/** The target's reading of the rounds: the drop of the median ratio from idle to busy is within
 * the noise when it is no larger than the idle rounds' spread (max − min). A run of one round has
 * no spread, so any drop above zero misses. */
export function busyIdleVerdict(rounds: readonly RoundRatios[]): BusyIdleVerdict {
  const idle = spreadOf(rounds.map((r) => r.idle));
  const busy = spreadOf(rounds.map((r) => r.busy));
  const drop = round(idle.median - busy.median);
  const noise = round(idle.max - idle.min);
  return {
    idle,
    busy,
    drop,
    noise,
    met: Number.isFinite(drop) && Number.isFinite(noise) && drop <= noise,
    paired_drop: spreadOf(rounds.map((r) => r.idle - r.busy)),
  };
}

/** Feeds in a busy round's batch: enough for the resolver at `ratePerS` (as measured alone) to be
 * still busy after `seconds`, `margin` times over, and at least `least`. */
export const batchSize = (ratePerS: number, seconds: number, margin = 2, least = 200): number =>
  Number.isFinite(ratePerS) && ratePerS > 0 ? Math.max(least, Math.ceil(ratePerS * seconds * margin)) : least;
