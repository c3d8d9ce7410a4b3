import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUCKET_RATIO, baselineView, bucketOf, LogHistogram, mergeHistograms } from './baseline.js';

/** The nearest-rank percentile of the values themselves. */
function exact(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

function histogramOf(values: number[], cap?: number): LogHistogram {
  const h = new LogHistogram(cap);
  for (const v of values) h.add(v);
  return h;
}

const durations = fc.array(fc.double({ min: 1, max: 3_600_000, noNaN: true }), {
  minLength: 1,
  maxLength: 500,
});

describe('LogHistogram', () => {
  it('is empty at first', () => {
    const h = new LogHistogram();
    expect(h.count).toBe(0);
    expect(h.p95()).toBeNull();
    expect(h.toJSON()).toEqual([]);
    expect(baselineView(h)).toBeNull();
  });

  it('p95 is within a bucket width of the exact p95 (property, random data)', () => {
    fc.assert(
      fc.property(durations, fc.double({ min: 0.01, max: 1, noNaN: true }), (values, q) => {
        const h = histogramOf(values);
        expect(h.count).toBe(values.length);
        const e = exact(values, 0.95);
        expect(Math.abs(h.p95()! - e)).toBeLessThanOrEqual(e * (BUCKET_RATIO - 1));
        const eq = exact(values, q);
        expect(Math.abs(h.percentile(q)! - eq)).toBeLessThanOrEqual(eq * (BUCKET_RATIO - 1));
      }),
    );
  });

  it('a known distribution: 1..1000 ms → p95 ≈ 950 ms', () => {
    const h = histogramOf(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(h.p95()).toBeGreaterThan(950 / BUCKET_RATIO);
    expect(h.p95()).toBeLessThan(950 * BUCKET_RATIO);
    expect(baselineView(h)).toEqual({ p95Ms: h.p95(), count: 1000 });
  });

  it('counts sub-millisecond values as 1 ms and ignores NaN and infinities', () => {
    const h = histogramOf([0, 0.2, -5, Number.NaN, Number.POSITIVE_INFINITY]);
    expect(h.count).toBe(3);
    expect(bucketOf(0.2)).toBe(0);
    expect(h.p95()).toBeCloseTo(Math.sqrt(BUCKET_RATIO), 6);
  });

  it('merge equals adding all values to one histogram (property, below the cap)', () => {
    fc.assert(
      fc.property(durations, durations, (a, b) => {
        const merged = mergeHistograms(histogramOf(a), histogramOf(b));
        expect(merged.toJSON()).toEqual(histogramOf([...a, ...b]).toJSON());
        expect(merged.count).toBe(a.length + b.length);
      }),
    );
  });

  it('round-trips through its compact JSON form', () => {
    fc.assert(
      fc.property(durations, (values) => {
        const h = histogramOf(values);
        const json = JSON.parse(JSON.stringify(h)) as unknown;
        const back = LogHistogram.fromJSON(json)!;
        expect(back.toJSON()).toEqual(h.toJSON());
        expect(back.count).toBe(h.count);
        expect(back.p95()).toBe(h.p95());
      }),
    );
    // pairs of [bucket index, count], ascending
    expect(histogramOf([1, 1, 2]).toJSON()).toEqual([0, 2, 8, 1]);
  });

  it('refuses JSON that is not its form', () => {
    for (const bad of [null, {}, [1], [1, 0], [-1, 3], [1.5, 2], [1, 2.5], ['1', 2], [99999, 1]]) {
      expect(LogHistogram.fromJSON(bad), JSON.stringify(bad)).toBeNull();
    }
  });

  it('decays: past the cap every bucket is halved, so new behaviour takes over', () => {
    const h = new LogHistogram(100);
    for (let i = 0; i < 100; i++) h.add(100);
    expect(h.count).toBe(100);
    h.add(100); // 101 > cap → halve: 50
    expect(h.count).toBe(50);
    expect(h.p95()).toBeLessThan(100 * BUCKET_RATIO);
    // The agents slow down to 1 s per iteration: after a few caps' worth, the p95 follows them.
    for (let i = 0; i < 200; i++) h.add(1000);
    expect(h.count).toBeLessThanOrEqual(100);
    expect(h.p95()).toBeGreaterThan(1000 / BUCKET_RATIO);
    // A lone old value fades out entirely.
    const lone = new LogHistogram(10);
    lone.add(5);
    for (let i = 0; i < 40; i++) lone.add(500);
    expect(lone.percentile(0.01)).toBeGreaterThan(400);
  });

  it('merge past the cap decays once', () => {
    const a = histogramOf(Array(80).fill(10), 100);
    const b = histogramOf(Array(80).fill(20), 100);
    const m = mergeHistograms(a, b);
    expect(m.count).toBe(80);
    expect(() => new LogHistogram(1)).toThrow(/cap must be an integer >= 2/);
  });
});
