import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as rules from './runaway.js';
import { MIN_RSS_GROWTH_SAMPLES } from './runaway.js';
import { type MetricSample, SAMPLE_RSS, SampleRing } from './samples.js';

// The rules read a SampleRing; these tests build their samples as tuples.
type Rest<F> = F extends (samples: SampleRing, ...rest: infer R) => unknown ? R : never;
const onTuples =
  <F extends (samples: SampleRing, ...rest: never[]) => unknown>(rule: F) =>
  (samples: readonly MetricSample[], ...rest: Rest<F>): ReturnType<F> =>
    (rule as (s: SampleRing, ...r: Rest<F>) => ReturnType<F>)(SampleRing.of(samples), ...rest);
const rssLimitRule = onTuples(rules.rssLimitRule);
const rssGrowthRule = onTuples(rules.rssGrowthRule);
const cpuPinnedRule = onTuples(rules.cpuPinnedRule);
const cpuPinnedOpensAt = onTuples(rules.cpuPinnedOpensAt);
const iterationSlowRule = onTuples(rules.iterationSlowRule);
const windowFit = onTuples(rules.windowFit);

const T0 = 1_700_000_000_000;
const S = 1000;
const MIN = 60 * S;
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** One sample every `everyMs` from T0, its metrics from `f(i, at)`. */
function series(
  n: number,
  everyMs: number,
  f: (i: number, at: number) => Partial<{ rss: number; cpu: number; iter: number }>,
): MetricSample[] {
  return Array.from({ length: n }, (_, i) => {
    const at = T0 + i * everyMs;
    const m = f(i, at);
    return [at, m.rss ?? null, m.cpu ?? null, m.iter ?? null] as const;
  });
}

/** RSS samples from (at, value) pairs. */
const rssRing = (points: [number, number][]): MetricSample[] => points.map(([at, v]) => [at, v, null, null]);
const fitOf = (ring: MetricSample[]) => windowFit(ring, SAMPLE_RSS, -Infinity, Infinity)?.fit ?? null;

describe('windowFit', () => {
  it('finds the slope per minute and r² = 1 on a straight line', () => {
    const fit = fitOf(rssRing([0, 1, 2, 3].map((i) => [T0 + i * MIN, 100 + 7 * i])))!;
    expect(fit.slopePerMin).toBeCloseTo(7, 9);
    expect(fit.r2).toBeCloseTo(1, 12);
  });
  it('has no line with one point or all points at one time; a flat series fits exactly', () => {
    expect(fitOf(rssRing([[T0, 1]]))).toBeNull();
    expect(
      fitOf(
        rssRing([
          [T0, 1],
          [T0, 2],
        ]),
      ),
    ).toBeNull();
    expect(
      fitOf(
        rssRing([
          [T0, 5],
          [T0 + S, 5],
        ]),
      ),
    ).toEqual({ slopePerMin: 0, r2: 1 });
  });
  it('reads only the window, and only samples that reported the metric; first and last in ring order', () => {
    const ring: MetricSample[] = [
      [T0, 100, null, null],
      [T0 + MIN, null, 50, null],
      [T0 + 2 * MIN, 110, null, null],
      [T0 + 3 * MIN, 130, null, null],
      [T0 + 4 * MIN, 999, null, null],
    ];
    const w = windowFit(ring, SAMPLE_RSS, T0 + MIN, T0 + 3 * MIN)!;
    expect(w.n).toBe(2);
    expect(w.first).toEqual({ at: T0 + 2 * MIN, value: 110 });
    expect(w.last).toEqual({ at: T0 + 3 * MIN, value: 130 });
    expect(w.fit!.slopePerMin).toBeCloseTo(20, 9);
    expect(windowFit(ring, SAMPLE_RSS, T0 + 5 * MIN, T0 + 6 * MIN)).toBeNull();
  });
});

describe('rss_limit', () => {
  const limits = { rssLimitBytes: 4 * GiB };
  it('holds when the latest RSS is above the limit, since the first sample of the run above it', () => {
    const samples = series(6, 10 * S, (i) => ({ rss: i < 3 ? 3 * GiB : 5 * GiB }));
    const f = rssLimitRule(samples, limits)!;
    expect(f.since).toBe(T0 + 30 * S);
    expect(f.evidence).toEqual({
      rule: 'rss_limit',
      rssBytes: 5 * GiB,
      rssLimitBytes: 4 * GiB,
      at: T0 + 50 * S,
    });
  });
  it('does not hold at or below the limit, without RSS samples, or with no limit', () => {
    expect(
      rssLimitRule(
        series(3, S, () => ({ rss: 4 * GiB })),
        limits,
      ),
    ).toBeNull();
    expect(
      rssLimitRule(
        series(3, S, (i) => ({ rss: i === 1 ? 5 * GiB : GiB })),
        limits,
      ),
    ).toBeNull();
    expect(
      rssLimitRule(
        series(3, S, () => ({ cpu: 50 })),
        limits,
      ),
    ).toBeNull();
    expect(rssLimitRule([], limits)).toBeNull();
    expect(
      rssLimitRule(
        series(3, S, () => ({ rss: 5 * GiB })),
        { rssLimitBytes: null },
      ),
    ).toBeNull();
  });
  it('skips samples that did not report RSS', () => {
    const samples = series(4, S, (i) => (i === 3 ? { cpu: 10 } : { rss: 5 * GiB }));
    expect(rssLimitRule(samples, limits)!.since).toBe(T0);
  });
  it('agrees with its definition on any ring: the run above the limit among the RSS samples, up to the latest', () => {
    const value = fc.option(fc.integer({ min: 1, max: 8 }), { nil: null });
    fc.assert(
      fc.property(fc.array(fc.tuple(value, value), { maxLength: 70 }), (metrics) => {
        const samples = series(metrics.length, S, (i) => {
          const [rss, cpu] = metrics[i]!;
          return { ...(rss === null ? {} : { rss: rss * GiB }), ...(cpu === null ? {} : { cpu }) };
        });
        // The definition, spelled out: the RSS samples, then the trailing run of those above the limit.
        const withRss = samples.filter((x) => x[1] !== null);
        let i = withRss.length;
        while (i > 0 && (withRss[i - 1]![1] as number) > limits.rssLimitBytes) i--;
        const run = withRss.slice(i);
        const f = rssLimitRule(samples, limits);
        if (run.length === 0) {
          expect(f).toBeNull();
          return;
        }
        expect(f?.since).toBe(run[0]![0]);
        expect(f?.evidence).toEqual({
          rule: 'rss_limit',
          rssBytes: run.at(-1)![1],
          rssLimitBytes: limits.rssLimitBytes,
          at: run.at(-1)![0],
        });
      }),
    );
  });
});

describe('rss_growth', () => {
  const limits = { rssGrowthBytesPerMin: 50 * MiB, rssWindowMs: 10 * MIN, minFit: 0.8 };
  it('holds on a steady rise above the limit over the window, with the slope and fit as evidence', () => {
    // 60 MiB per minute, a sample every 30 s for 10 minutes
    const samples = series(21, 30 * S, (i) => ({ rss: GiB + i * 30 * MiB }));
    const f = rssGrowthRule(samples, limits)!;
    expect(f.rule).toBe('rss_growth');
    expect(f.since).toBe(T0 + 600 * S);
    expect(f.evidence).toMatchObject({
      slopeBytesPerMin: 60 * MiB,
      r2: 1,
      rssGrowthBytesPerMin: 50 * MiB,
      minFit: 0.8,
      windowMs: 10 * MIN,
      samples: 21,
      fromAt: T0,
      toAt: T0 + 600 * S,
      firstRssBytes: GiB,
      lastRssBytes: GiB + 600 * MiB,
    });
  });
  it('only reads the window ending at the latest sample (an old rise has left it)', () => {
    const rise = series(21, 30 * S, (i) => ({ rss: GiB + i * 30 * MiB }));
    const flat = series(21, 30 * S, () => ({ rss: 2 * GiB })).map(
      ([at, ...m]) => [at + 630 * S, ...m] as unknown as MetricSample,
    );
    expect(rssGrowthRule([...rise, ...flat], limits)).toBeNull();
  });
  it('does not hold below the growth limit', () => {
    const samples = series(21, 30 * S, (i) => ({ rss: GiB + i * 20 * MiB })); // 40 MiB/min
    expect(rssGrowthRule(samples, limits)).toBeNull();
  });
  it('needs enough samples', () => {
    const few = series(MIN_RSS_GROWTH_SAMPLES - 1, 2 * MIN, (i) => ({ rss: GiB + i * 200 * MiB }));
    expect(rssGrowthRule(few, limits)).toBeNull();
    const enough = series(MIN_RSS_GROWTH_SAMPLES, 2 * MIN, (i) => ({ rss: GiB + i * 200 * MiB }));
    expect(rssGrowthRule(enough, limits)).not.toBeNull();
  });
  it('needs samples spanning half the window (a fast rise over 4 minutes says little yet)', () => {
    const short = series(9, 30 * S, (i) => ({ rss: GiB + i * 100 * MiB })); // spans 4 min < 5 min
    expect(rssGrowthRule(short, limits)).toBeNull();
    const half = series(11, 30 * S, (i) => ({ rss: GiB + i * 100 * MiB })); // spans 5 min
    expect(rssGrowthRule(half, limits)).not.toBeNull();
  });
  it('refuses a noisy, non-linear series whose slope is steep but whose fit is poor', () => {
    // a sawtooth: garbage collections drop RSS back every 4 samples, with a small net rise
    const noisy = series(21, 30 * S, (i) => ({ rss: GiB + (i % 4) * 400 * MiB + i * 30 * MiB }));
    const fit = fitOf(noisy)!;
    expect(fit.slopePerMin).toBeGreaterThan(50 * MiB);
    expect(fit.r2).toBeLessThan(0.8);
    expect(rssGrowthRule(noisy, limits)).toBeNull();
    // the same series passes with a lax fit requirement
    expect(rssGrowthRule(noisy, { ...limits, minFit: fit.r2 })).not.toBeNull();
  });
  it('is off without rss_growth', () => {
    const samples = series(21, 30 * S, (i) => ({ rss: GiB + i * 30 * MiB }));
    expect(rssGrowthRule(samples, { ...limits, rssGrowthBytesPerMin: null })).toBeNull();
  });
});

describe('cpu_pinned', () => {
  const limits = { cpuPercent: 90, cpuWindowMs: 5 * MIN };
  // CPU at 99 % from T0 + 60 s on, a sample every 10 s
  const pinned = series(60, 10 * S, (i) => ({ cpu: i < 6 ? 20 : 99 }));
  const runStart = T0 + 60 * S;

  it('holds once the run of high samples covers the whole window, since the window filled', () => {
    expect(cpuPinnedOpensAt(pinned, limits, null)).toBe(runStart + 5 * MIN);
    expect(cpuPinnedRule(pinned, runStart + 5 * MIN - 1, limits, null)).toBeNull();
    const f = cpuPinnedRule(pinned, T0 + 590 * S, limits, null)!;
    expect(f.since).toBe(runStart + 5 * MIN);
    expect(f.evidence).toMatchObject({
      rule: 'cpu_pinned',
      cpuPercentThreshold: 90,
      minCpuPercent: 99,
      lastCpuPercent: 99,
      pinnedSinceAt: runStart,
      windowMs: 5 * MIN,
      lastProgressAt: null,
      samples: 54,
    });
  });
  it('the window not yet covered: high for 4 minutes only', () => {
    const four = pinned.slice(0, 30); // last sample at T0 + 290 s, run from T0 + 60 s
    expect(cpuPinnedRule(four, T0 + 290 * S, limits, null)).toBeNull();
    expect(cpuPinnedOpensAt(four, limits, null)).toBe(runStart + 5 * MIN);
  });
  it('progress that moved during the window holds it back until the window passes it', () => {
    const progressAt = T0 + 400 * S;
    expect(cpuPinnedRule(pinned, T0 + 590 * S, limits, progressAt)).toBeNull();
    expect(cpuPinnedOpensAt(pinned, limits, progressAt)).toBe(progressAt + 5 * MIN);
    expect(cpuPinnedRule(pinned, progressAt + 5 * MIN, limits, progressAt)!.since).toBe(progressAt + 5 * MIN);
    // progress before the run does not matter
    expect(cpuPinnedRule(pinned, T0 + 590 * S, limits, T0)!.since).toBe(runStart + 5 * MIN);
  });
  it('one sample below the threshold restarts the run', () => {
    const dip = pinned.map((s, i) => (i === 40 ? ([s[0], null, 50, null] as const) : s));
    expect(cpuPinnedOpensAt(dip, limits, null)).toBe(T0 + 410 * S + 5 * MIN);
    expect(cpuPinnedRule(dip, T0 + 590 * S, limits, null)).toBeNull();
  });
  it('is off without cpu_percent, and null when CPU is not high now or never reported', () => {
    expect(cpuPinnedRule(pinned, T0 + 590 * S, { ...limits, cpuPercent: null }, null)).toBeNull();
    const cooled = [...pinned, [T0 + 600 * S, null, 10, null] as const];
    expect(cpuPinnedOpensAt(cooled, limits, null)).toBeNull();
    expect(
      cpuPinnedOpensAt(
        series(5, S, () => ({ rss: 1 })),
        limits,
        null,
      ),
    ).toBeNull();
  });
});

describe('iteration_slow', () => {
  const limits = { iterationFactor: 3, maxIterationMs: null, minBaselineSamples: 30 };
  const baseline = { p95Ms: 10_000, count: 100 };
  const slow = series(5, 10 * S, (i) => ({ iter: i < 3 ? 8000 : 40_000 }));

  it('holds above factor × the p95 baseline, since the first slow iteration in a row', () => {
    const f = iterationSlowRule(slow, limits, baseline)!;
    expect(f.since).toBe(T0 + 30 * S);
    expect(f.evidence).toEqual({
      rule: 'iteration_slow',
      iterationMs: 40_000,
      at: T0 + 40 * S,
      limitMs: 30_000,
      exceeded: 'baseline',
      iterationFactor: 3,
      baselineP95Ms: 10_000,
      baselineCount: 100,
      minBaselineSamples: 30,
      maxIterationMs: null,
    });
    expect(
      iterationSlowRule(
        series(1, S, () => ({ iter: 30_000 })),
        limits,
        baseline,
      ),
    ).toBeNull();
  });
  it('ignores a baseline with too few samples, or none', () => {
    expect(iterationSlowRule(slow, limits, { p95Ms: 10_000, count: 29 })).toBeNull();
    expect(iterationSlowRule(slow, limits, null)).toBeNull();
    expect(iterationSlowRule(slow, limits, { p95Ms: 10_000, count: 30 })).not.toBeNull();
  });
  it('holds above max_iteration with or without a baseline; the lower limit decides', () => {
    const max = { iterationFactor: null, maxIterationMs: 20_000, minBaselineSamples: 30 };
    expect(iterationSlowRule(slow, max, null)!.evidence).toMatchObject({
      limitMs: 20_000,
      exceeded: 'max_iteration',
    });
    const both = { ...limits, maxIterationMs: 35_000 };
    expect(iterationSlowRule(slow, both, baseline)!.evidence).toMatchObject({
      limitMs: 30_000,
      exceeded: 'baseline',
    });
    expect(iterationSlowRule(slow, both, { p95Ms: 20_000, count: 100 })!.evidence).toMatchObject({
      limitMs: 35_000,
      exceeded: 'max_iteration',
    });
  });
  it('a fast latest iteration clears it; off without any limit', () => {
    const recovered = [...slow, [T0 + 50 * S, null, null, 5000] as const];
    expect(iterationSlowRule(recovered, limits, baseline)).toBeNull();
    expect(
      iterationSlowRule(
        slow,
        { iterationFactor: null, maxIterationMs: null, minBaselineSamples: 30 },
        baseline,
      ),
    ).toBeNull();
  });
});
