import { loadavg } from 'node:os';

export type Side = 'baseline' | 'castlog';

/** One round: both sides measured back to back, in `order`. */
export interface Round<T> {
  readonly round: number;
  readonly order: readonly [Side, Side];
  /** The machine's 1-minute load average when the round started. */
  readonly load_1m: number;
  readonly baseline: T;
  readonly castlog: T;
}

/** Measures baseline and castlog in `rounds` rounds, flipping the order every round (B C, C B,
 * B C, …, or C B first with `castlogFirst`), so that a machine whose speed drifts during the run
 * weighs on both alike. */
export async function alternate<T>(
  rounds: number,
  measure: (side: Side, round: number) => Promise<T>,
  options: { castlogFirst?: boolean } = {},
): Promise<Round<T>[]> {
  const done: Round<T>[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    const baselineFirst = (round % 2 === 1) !== (options.castlogFirst ?? false);
    const order: [Side, Side] = baselineFirst ? ['baseline', 'castlog'] : ['castlog', 'baseline'];
    const load1m = Number((loadavg()[0] ?? Number.NaN).toFixed(2));
    const results: Partial<Record<Side, T>> = {};
    for (const side of order) results[side] = await measure(side, round);
    done.push({
      round,
      order,
      load_1m: load1m,
      baseline: results.baseline as T,
      castlog: results.castlog as T,
    });
  }
  return done;
}
