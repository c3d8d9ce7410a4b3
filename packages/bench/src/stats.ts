/**
 * Summary statistics for latency samples. Percentiles use the nearest-rank method on the sorted
 * samples (no interpolation), so p99 of 100 samples is the 99th smallest value — a value that was
 * actually observed.
 */

export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of already sorted samples; `p` in [0, 100]. NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  let sum = 0;
  for (const s of sorted) sum += s;
  return {
    count: sorted.length,
    min: sorted[0] ?? Number.NaN,
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Round to `digits` decimals (for reports; keeps JSON readable). */
export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A summary with every statistic rounded (for the JSON report). */
export function roundSummary(s: Summary, digits = 2): Summary {
  return {
    count: s.count,
    min: round(s.min, digits),
    mean: round(s.mean, digits),
    p50: round(s.p50, digits),
    p90: round(s.p90, digits),
    p99: round(s.p99, digits),
    max: round(s.max, digits),
  };
}
