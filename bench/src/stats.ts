/** Latency summaries from a plain sorted array: exact percentiles (nearest rank), no buckets. */

export interface LatencySummary {
  readonly count: number;
  readonly mean_ms: number;
  readonly p50_ms: number;
  readonly p95_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function summarize(samplesMs: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samplesMs).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    mean_ms: round(sorted.length ? sum / sorted.length : Number.NaN),
    p50_ms: round(percentile(sorted, 50)),
    p95_ms: round(percentile(sorted, 95)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN),
  };
}

/** Three significant decimals are plenty for milliseconds and rates. */
export const round = (value: number, digits = 3): number =>
  Number.isFinite(value) ? Number(value.toFixed(digits)) : value;

/** measured / baseline, rounded; NaN when the baseline is zero or missing. */
export const ratio = (measured: number, baseline: number): number =>
  baseline > 0 && Number.isFinite(measured) ? round(measured / baseline) : Number.NaN;

/** Milliseconds since `start` (from performance.now()). */
export const since = (start: number): number => performance.now() - start;

/** A figure measured once per round: the median of the rounds, with the lowest and highest beside it. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** The median (the mean of the middle two for an even count), min and max of `values`, ignoring
 * values that are not finite numbers; NaN for all three when none is. */
export function spreadOf(values: readonly number[], digits = 3): Spread {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  const middle = sorted.length >> 1;
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return {
    median: round(median, digits),
    min: round(sorted[0] as number, digits),
    max: round(sorted[sorted.length - 1] as number, digits),
  };
}

/** "0.585 (0.523–0.644)": the median, then the range of the rounds when there are several. */
export const formatSpread = (spread: Spread, format: (value: number) => string = String): string =>
  spread.min === spread.max
    ? format(spread.median)
    : `${format(spread.median)} (${format(spread.min)}–${format(spread.max)})`;
