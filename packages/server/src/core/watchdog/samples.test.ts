import { describe, expect, it } from 'vitest';
import {
  appendSample,
  gapsOf,
  latestPoint,
  type MetricSample,
  pointsBetween,
  SAMPLE_CPU,
  SAMPLE_ITERATION,
  SAMPLE_RSS,
  samplesBetween,
} from './samples.js';

const ring: MetricSample[] = [
  [1000, 10, 50, null],
  [2000, null, 60, 300],
  [3000, 30, null, null],
  [4000, 40, 80, null],
];

describe('samples', () => {
  it('pointsBetween: one metric within a closed window, skipping samples without it', () => {
    expect(pointsBetween(ring, SAMPLE_RSS, 1000, 3000)).toEqual([
      { at: 1000, value: 10 },
      { at: 3000, value: 30 },
    ]);
    expect(pointsBetween(ring, SAMPLE_CPU, 1500, 5000).map((p) => p.value)).toEqual([60, 80]);
    expect(pointsBetween(ring, SAMPLE_ITERATION, 0, 1500)).toEqual([]);
  });
  it('samplesBetween: whole samples within a closed window', () => {
    expect(samplesBetween(ring, 2000, 3000)).toEqual([ring[1], ring[2]]);
  });
  it('latestPoint: the newest sample that reported the metric', () => {
    expect(latestPoint(ring, SAMPLE_ITERATION)).toEqual({ at: 2000, value: 300 });
    expect(latestPoint(ring, SAMPLE_RSS)).toEqual({ at: 4000, value: 40 });
    expect(latestPoint([], SAMPLE_CPU)).toBeNull();
  });
  it('appendSample keeps at most `capacity`, dropping the oldest, without changing its input', () => {
    const next = appendSample(ring, [5000, 50, 90, null], 3);
    expect(next.map((s) => s[0])).toEqual([3000, 4000, 5000]);
    expect(ring).toHaveLength(4);
    expect(appendSample([], [1, null, null, null], 3)).toEqual([[1, null, null, null]]);
  });
  it('gapsOf: consecutive gaps; a clock that went back gives no negative gap', () => {
    expect(gapsOf([1000, 6000, 11_500, 11_000, 16_000])).toEqual([5000, 5500, 5000]);
    expect(gapsOf([5])).toEqual([]);
  });
});
