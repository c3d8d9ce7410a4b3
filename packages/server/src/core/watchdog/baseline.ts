/**
 * A per-agent-type baseline of a duration (loop iteration times, heartbeat gaps): a log-bucket
 * histogram. Buckets grow geometrically (8 per doubling, so a bucket spans about 9 % of its values),
 * which keeps a baseline of any range small (a few dozen buckets), mergeable across coordinators by
 * adding counts, and its percentiles accurate to a bucket. When the count passes a cap every bucket
 * is halved, so what the agents did long ago fades and the baseline follows their current behaviour.
 *
 * Resolution ends at 1 ms: shorter durations count as 1 ms.
 */
import { ValidationError } from '../errors.js';

/** Buckets per doubling of the value. */
export const BUCKETS_PER_DOUBLING = 8;
/** The ratio between a bucket's upper and lower bound (≈ 1.09). */
export const BUCKET_RATIO = 2 ** (1 / BUCKETS_PER_DOUBLING);
/** The count past which every bucket is halved. */
export const DEFAULT_HISTOGRAM_CAP = 10_000;
/** Bucket indices beyond these are refused when reading JSON (1 ms … ≈ 10^60 ms). */
const MIN_INDEX = 0;
const MAX_INDEX = 1600;

/** A log-bucket histogram of durations in ms (mutable; see the module doc). */
export class LogHistogram {
  readonly cap: number;
  readonly #buckets = new Map<number, number>();
  #count = 0;

  /** `cap`: the count past which every bucket is halved. @default DEFAULT_HISTOGRAM_CAP */
  constructor(cap: number = DEFAULT_HISTOGRAM_CAP) {
    if (!Number.isInteger(cap) || cap < 2)
      throw new ValidationError('cap', `must be an integer >= 2 (got ${cap})`);
    this.cap = cap;
  }

  /** How many values it holds (after decay). */
  get count(): number {
    return this.#count;
  }

  /** Records one duration; NaN and infinities are ignored. */
  add(ms: number): void {
    if (!Number.isFinite(ms)) return;
    this.addToBucket(bucketOf(ms), 1);
  }

  /**
   * The `q` quantile (0 < q ≤ 1; nearest rank) as the geometric middle of its bucket, or null when
   * empty. Within half a bucket (≈ 4.5 %) of the exact quantile of the values added (values ≥ 1 ms).
   */
  percentile(q: number): number | null {
    if (this.#count === 0) return null;
    const rank = Math.max(1, Math.ceil(Math.min(1, Math.max(0, q)) * this.#count));
    let seen = 0;
    for (const [index, n] of this.entries()) {
      seen += n;
      if (seen >= rank) return BUCKET_RATIO ** (index + 0.5);
    }
    return null; // unreachable: the counts add up to #count
  }

  /** The 95th percentile, or null when empty. */
  p95(): number | null {
    return this.percentile(0.95);
  }

  /** `[index, count, index, count, …]` by ascending index: the compact form kept in the store. */
  toJSON(): number[] {
    return this.entries().flat();
  }

  /** A histogram from `toJSON()`'s form, or null when `value` is not one (a corrupt row). */
  static fromJSON(value: unknown, cap: number = DEFAULT_HISTOGRAM_CAP): LogHistogram | null {
    if (!Array.isArray(value) || value.length % 2 !== 0) return null;
    const h = new LogHistogram(cap);
    for (let i = 0; i < value.length; i += 2) {
      const index: unknown = value[i];
      const n: unknown = value[i + 1];
      if (!Number.isInteger(index) || !Number.isInteger(n)) return null;
      if ((index as number) < MIN_INDEX || (index as number) > MAX_INDEX || (n as number) < 1) return null;
      h.#buckets.set(index as number, (h.#buckets.get(index as number) ?? 0) + (n as number));
      h.#count += n as number;
    }
    h.decay();
    return h;
  }

  /** Buckets by ascending index. */
  private entries(): [number, number][] {
    return [...this.#buckets.entries()].sort((a, b) => a[0] - b[0]);
  }

  private addToBucket(index: number, n: number): void {
    this.#buckets.set(index, (this.#buckets.get(index) ?? 0) + n);
    this.#count += n;
    this.decay();
  }

  /** Halves every bucket (dropping emptied ones) until the count is within the cap. */
  private decay(): void {
    while (this.#count > this.cap) {
      this.#count = 0;
      for (const [index, n] of this.#buckets) {
        const half = Math.floor(n / 2);
        if (half === 0) this.#buckets.delete(index);
        else {
          this.#buckets.set(index, half);
          this.#count += half;
        }
      }
    }
  }

  /** Adds every bucket of `other` into this one (then decays once if past the cap). */
  absorb(other: LogHistogram): void {
    for (const [index, n] of other.#buckets) {
      this.#buckets.set(index, (this.#buckets.get(index) ?? 0) + n);
      this.#count += n;
    }
    this.decay();
  }
}

/**
 * A new histogram holding both (each coordinator keeps its own baseline per agent type; readers merge
 * them). Below the cap this equals adding every value of both to one histogram.
 */
export function mergeHistograms(a: LogHistogram, b: LogHistogram): LogHistogram {
  const out = new LogHistogram(Math.max(a.cap, b.cap));
  out.absorb(a);
  out.absorb(b);
  return out;
}

/** The bucket of a duration: ⌊log₂(ms) × BUCKETS_PER_DOUBLING⌋, from 1 ms. */
export function bucketOf(ms: number): number {
  return Math.min(MAX_INDEX, Math.floor(Math.log2(Math.max(1, ms)) * BUCKETS_PER_DOUBLING));
}

/** What a detector needs of a baseline: its 95th percentile and how many values it rests on. */
export interface BaselineView {
  p95Ms: number;
  count: number;
}

/** The baseline view of a histogram, or null when it is empty. */
export function baselineView(h: LogHistogram): BaselineView | null {
  const p95Ms = h.p95();
  return p95Ms === null ? null : { p95Ms, count: h.count };
}
