/**
 * The compact metric sample the watchdog keeps per agent: a bounded ring in the agent's row, oldest
 * first, one entry per heartbeat that carried metrics. A tuple rather than an object so that a ring of
 * a few hundred samples stays small as JSON.
 */

/**
 * `[at, rssBytes, cpuPercent, iterationMs]`: when the heartbeat arrived (epoch ms, the coordinator's
 * clock) and what it reported; `null` for a metric it did not report.
 */
export type MetricSample = readonly [
  at: number,
  rssBytes: number | null,
  cpuPercent: number | null,
  iterationMs: number | null,
];

/** The index of each metric in a {@link MetricSample}. */
export const SAMPLE_RSS = 1;
export const SAMPLE_CPU = 2;
export const SAMPLE_ITERATION = 3;
export type SampleMetric = typeof SAMPLE_RSS | typeof SAMPLE_CPU | typeof SAMPLE_ITERATION;

/** A point of one metric: when, and its value. */
export interface MetricPoint {
  at: number;
  value: number;
}

/**
 * The points of one metric whose time lies in `[from, to]` (both inclusive), oldest first; samples
 * that did not report the metric are skipped. Samples are assumed oldest first, as the ring keeps them.
 */
export function pointsBetween(
  samples: readonly MetricSample[],
  metric: SampleMetric,
  from: number,
  to: number,
): MetricPoint[] {
  const out: MetricPoint[] = [];
  for (const s of samples) {
    const value = s[metric];
    if (s[0] >= from && s[0] <= to && value !== null) out.push({ at: s[0], value });
  }
  return out;
}

/** The samples whose time lies in `[from, to]` (both inclusive), in ring order. */
export function samplesBetween(samples: readonly MetricSample[], from: number, to: number): MetricSample[] {
  return samples.filter((s) => s[0] >= from && s[0] <= to);
}

/** The latest point of one metric, or null when no sample reported it. */
export function latestPoint(samples: readonly MetricSample[], metric: SampleMetric): MetricPoint | null {
  for (let i = samples.length - 1; i >= 0; i--) {
    const s = samples[i]!;
    const value = s[metric];
    if (value !== null) return { at: s[0], value };
  }
  return null;
}

/**
 * Appends a sample to a ring of at most `capacity` entries, dropping the oldest; returns a new array.
 * A sample older than the newest one (a clock that went back) is still appended: the ring records
 * arrival order, and the detectors read times, not positions.
 */
export function appendSample(
  samples: readonly MetricSample[],
  sample: MetricSample,
  capacity: number,
): MetricSample[] {
  const next = [...samples, sample];
  return next.length > capacity ? next.slice(next.length - capacity) : next;
}

/** The gaps between consecutive times (heartbeat or sample times), in ms; negative gaps are dropped. */
export function gapsOf(times: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < times.length; i++) {
    const gap = times[i]! - times[i - 1]!;
    if (gap >= 0) out.push(gap);
  }
  return out;
}
