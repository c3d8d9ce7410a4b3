/**
 * The compact metric samples the watchdog keeps per agent: a bounded ring in the agent's row, oldest
 * first, one entry per heartbeat that carried metrics. In memory the ring is flat — four float64s a
 * sample in one `Float64Array`, NaN for a metric not reported — so that reading, appending and storing
 * it on every heartbeat makes one object, not one per sample.
 */

/**
 * `[at, rssBytes, cpuPercent, iterationMs]`: when the heartbeat arrived (epoch ms, the coordinator's
 * clock) and what it reported; `null` for a metric it did not report. How a sample is written and
 * read out of a {@link SampleRing}.
 */
export type MetricSample = readonly [
  at: number,
  rssBytes: number | null,
  cpuPercent: number | null,
  iterationMs: number | null,
];

/** The index of each metric in a {@link MetricSample} (and in a ring's sample). */
export const SAMPLE_RSS = 1;
export const SAMPLE_CPU = 2;
export const SAMPLE_ITERATION = 3;
export type SampleMetric = typeof SAMPLE_RSS | typeof SAMPLE_CPU | typeof SAMPLE_ITERATION;

/** Numbers per sample in a ring. */
export const SAMPLE_FIELDS = 4;

/** An agent's ring of samples, oldest first. Immutable: {@link SampleRing.append} returns a new one. */
export class SampleRing {
  static readonly EMPTY = new SampleRing(new Float64Array(0));

  /** `data`: four numbers a sample (its length a multiple of 4), NaN for a metric not reported. */
  private constructor(readonly data: Float64Array) {}

  /** A ring over `data` (not copied); a trailing partial sample is left out. */
  static fromData(data: Float64Array): SampleRing {
    const whole = data.length - (data.length % SAMPLE_FIELDS);
    if (whole === 0) return SampleRing.EMPTY;
    return new SampleRing(whole === data.length ? data : data.subarray(0, whole));
  }

  static of(samples: readonly MetricSample[]): SampleRing {
    if (samples.length === 0) return SampleRing.EMPTY;
    const data = new Float64Array(samples.length * SAMPLE_FIELDS);
    for (const [i, s] of samples.entries()) write(data, i * SAMPLE_FIELDS, s);
    return new SampleRing(data);
  }

  get length(): number {
    return this.data.length / SAMPLE_FIELDS;
  }

  /** When sample `i` was taken. */
  time(i: number): number {
    return this.data[i * SAMPLE_FIELDS]!;
  }

  /** What sample `i` reported of `metric`, or null. */
  value(i: number, metric: SampleMetric): number | null {
    const v = this.data[i * SAMPLE_FIELDS + metric]!;
    return Number.isNaN(v) ? null : v;
  }

  sample(i: number): MetricSample {
    return [
      this.time(i),
      this.value(i, SAMPLE_RSS),
      this.value(i, SAMPLE_CPU),
      this.value(i, SAMPLE_ITERATION),
    ];
  }

  /**
   * This ring and `sample` after it, at most `capacity` samples (the oldest dropped). A sample older
   * than the newest one (a clock that went back) is still appended: the ring records arrival order,
   * and the detectors read times, not positions.
   */
  append(sample: MetricSample, capacity: number): SampleRing {
    const keep = Math.min(this.length, Math.max(0, Math.floor(capacity) - 1));
    const data = new Float64Array((keep + 1) * SAMPLE_FIELDS);
    data.set(this.data.subarray(this.data.length - keep * SAMPLE_FIELDS));
    write(data, keep * SAMPLE_FIELDS, sample);
    return new SampleRing(data);
  }

  toArray(): MetricSample[] {
    return Array.from({ length: this.length }, (_, i) => this.sample(i));
  }
}

function write(data: Float64Array, offset: number, s: MetricSample): void {
  data[offset] = s[0];
  for (let f = 1; f < SAMPLE_FIELDS; f++) data[offset + f] = s[f] ?? Number.NaN;
}

/** A point of one metric: when, and its value. */
export interface MetricPoint {
  at: number;
  value: number;
}

/**
 * The points of one metric whose time lies in `[from, to]` (both inclusive), oldest first; samples
 * that did not report the metric are skipped.
 */
export function pointsBetween(
  ring: SampleRing,
  metric: SampleMetric,
  from: number,
  to: number,
): MetricPoint[] {
  const out: MetricPoint[] = [];
  for (let i = 0; i < ring.length; i++) {
    const at = ring.time(i);
    const value = ring.value(i, metric);
    if (at >= from && at <= to && value !== null) out.push({ at, value });
  }
  return out;
}

/** The latest point of one metric, or null when no sample reported it. */
export function latestPoint(ring: SampleRing, metric: SampleMetric): MetricPoint | null {
  for (let i = ring.length - 1; i >= 0; i--) {
    const value = ring.value(i, metric);
    if (value !== null) return { at: ring.time(i), value };
  }
  return null;
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
