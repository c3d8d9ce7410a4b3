import { describe, expect, it } from 'vitest';
import {
  gapsOf,
  latestPoint,
  type MetricSample,
  pointsBetween,
  SAMPLE_CPU,
  SAMPLE_ITERATION,
  SAMPLE_RSS,
  SampleRing,
} from './samples.js';

const tuples: MetricSample[] = [
  [1000, 10, 50, null],
  [2000, null, 60, 300],
  [3000, 30, null, null],
  [4000, 40, 80, null],
];
const ring = SampleRing.of(tuples);

describe('samples', () => {
  it('pointsBetween: one metric within a closed window, skipping samples without it', () => {
    expect(pointsBetween(ring, SAMPLE_RSS, 1000, 3000)).toEqual([
      { at: 1000, value: 10 },
      { at: 3000, value: 30 },
    ]);
    expect(pointsBetween(ring, SAMPLE_CPU, 1500, 5000).map((p) => p.value)).toEqual([60, 80]);
    expect(pointsBetween(ring, SAMPLE_ITERATION, 0, 1500)).toEqual([]);
  });
  it('a ring gives back the samples it was made of, null for a metric not reported', () => {
    expect(ring.length).toBe(4);
    expect(ring.toArray()).toEqual(tuples);
    expect(ring.sample(1)).toEqual([2000, null, 60, 300]);
    expect(SampleRing.of([]).length).toBe(0);
    // a partial trailing sample in stored data is left out
    expect(SampleRing.fromData(new Float64Array([1, 2, 3, 4, 5])).toArray()).toEqual([[1, 2, 3, 4]]);
  });
  it('latestPoint: the newest sample that reported the metric', () => {
    expect(latestPoint(ring, SAMPLE_ITERATION)).toEqual({ at: 2000, value: 300 });
    expect(latestPoint(ring, SAMPLE_RSS)).toEqual({ at: 4000, value: 40 });
    expect(latestPoint(SampleRing.EMPTY, SAMPLE_CPU)).toBeNull();
  });
  it('append keeps at most `capacity`, dropping the oldest, without changing the ring', () => {
    const next = ring.append([5000, 50, 90, null], 3);
    expect(next.toArray().map((s) => s[0])).toEqual([3000, 4000, 5000]);
    expect(next.sample(2)).toEqual([5000, 50, 90, null]);
    expect(ring.toArray()).toEqual(tuples);
    expect(ring.append([5000, null, null, null], 10).length).toBe(5);
    expect(SampleRing.EMPTY.append([1, null, null, null], 3).toArray()).toEqual([[1, null, null, null]]);
    expect(ring.append([9, 1, 2, 3], 1).toArray()).toEqual([[9, 1, 2, 3]]);
  });
  it('gapsOf: consecutive gaps; a clock that went back gives no negative gap', () => {
    expect(gapsOf([1000, 6000, 11_500, 11_000, 16_000])).toEqual([5000, 5500, 5000]);
    expect(gapsOf([5])).toEqual([]);
  });
});
