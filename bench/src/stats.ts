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
