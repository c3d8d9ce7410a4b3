import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { agentHeartbeatTimeoutMs, gapStats, MIN_PHI_GAPS, phi, phiTimeoutMs } from './phi.js';

const regular = [5000, 5010, 4990, 5005, 4995, 5000, 5002, 4998, 5001, 4999];
const jittery = [3000, 7000, 4000, 6500, 3500, 6000, 5000, 4500, 7500, 3000];

describe('phi', () => {
  it('is null with fewer than MIN_PHI_GAPS gaps (the fixed timeout applies)', () => {
    const few = regular.slice(0, MIN_PHI_GAPS - 1);
    expect(phi(10_000, few)).toBeNull();
    expect(phiTimeoutMs(few, 8, 1000)).toBeNull();
    expect(gapStats(few)).toBeNull();
    expect(phi(10_000, regular.slice(0, MIN_PHI_GAPS))).not.toBeNull();
  });

  it('is near 0 before the mean gap, about 0.3 at the mean, and grows after it', () => {
    expect(phi(1000, regular)).toBeLessThan(1e-6);
    expect(phi(5000, regular)).toBeCloseTo(Math.log10(2), 2); // P(gap > mean) = 1/2
    const later = [5500, 6000, 7000, 9000, 20_000].map((t) => phi(t, regular)!);
    for (let i = 1; i < later.length; i++) expect(later[i]).toBeGreaterThan(later[i - 1]!);
    expect(Number.isFinite(phi(1e9, regular))).toBe(true);
  });

  it('floors the std-dev at a tenth of the mean: a perfectly regular agent is not killed by 1 ms', () => {
    const exact = Array(10).fill(5000);
    expect(gapStats(exact)).toEqual({ meanMs: 5000, stdMs: 500 });
    expect(phi(5001, exact)).toBeLessThan(1);
    // and at 10 ms for tiny gaps
    expect(gapStats(Array(10).fill(20))!.stdMs).toBe(10);
  });
});

describe('phiTimeoutMs', () => {
  it('regular gaps: a little past the mean (about 5.2 floored std-devs at threshold 8)', () => {
    const t = phiTimeoutMs(regular, 8, 0)!;
    expect(t).toBeGreaterThan(5000);
    expect(t).toBeGreaterThan(5000 + 5 * 500);
    expect(t).toBeLessThan(5000 + 5.5 * 500);
    expect(phi(t, regular)!).toBeGreaterThanOrEqual(8);
    expect(phi(t - 1, regular)!).toBeLessThan(8);
  });

  it('jittery gaps: later than regular gaps with the same mean', () => {
    const mean = jittery.reduce((a, b) => a + b, 0) / jittery.length;
    expect(mean).toBe(5000);
    expect(phiTimeoutMs(jittery, 8, 0)!).toBeGreaterThan(phiTimeoutMs(regular, 8, 0)! + 2000);
  });

  it('never goes below the floor', () => {
    expect(phiTimeoutMs(regular, 8, 10_000)).toBe(10_000);
    expect(phiTimeoutMs(Array(10).fill(100), 1, 2000)).toBe(2000);
  });

  it('is monotone in the threshold and inverts phi (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 50, max: 60_000 }), { minLength: MIN_PHI_GAPS, maxLength: 40 }),
        fc.double({ min: 0.5, max: 30, noNaN: true }),
        fc.double({ min: 0.01, max: 10, noNaN: true }),
        (gaps, threshold, extra) => {
          const a = phiTimeoutMs(gaps, threshold, 0)!;
          const b = phiTimeoutMs(gaps, threshold + extra, 0)!;
          expect(b).toBeGreaterThanOrEqual(a);
          // phi crosses the threshold at the returned time (rounded up to whole ms)
          expect(phi(a, gaps)!).toBeGreaterThanOrEqual(threshold - 1e-9);
          expect(phi(a - 1, gaps)!).toBeLessThan(threshold + 1e-9);
        },
      ),
    );
  });

  it('stays finite for huge thresholds and refuses a threshold <= 0', () => {
    expect(Number.isFinite(phiTimeoutMs(regular, 400, 0))).toBe(true);
    expect(() => phiTimeoutMs(regular, 0, 0)).toThrow(ValidationError);
    expect(() => phiTimeoutMs(regular, Number.NaN, 0)).toThrow(/phiThreshold must be a finite number > 0/);
  });
});

describe('agentHeartbeatTimeoutMs', () => {
  const heartbeat = {
    expectedIntervalMs: 5000,
    timeoutFactor: 3,
    adaptive: false,
    phiThreshold: 8,
    minTimeoutMs: 10_000,
  };
  it('is timeoutFactor × interval unless adaptive', () => {
    expect(agentHeartbeatTimeoutMs(heartbeat, jittery)).toBe(15_000);
    expect(agentHeartbeatTimeoutMs({ ...heartbeat, adaptive: true }, [])).toBe(15_000);
  });
  it('adaptive with enough gaps: the phi timeout, never below minTimeoutMs', () => {
    expect(agentHeartbeatTimeoutMs({ ...heartbeat, adaptive: true }, regular)).toBe(10_000);
    const slow = jittery.map((g) => g * 3);
    const t = agentHeartbeatTimeoutMs({ ...heartbeat, adaptive: true }, slow);
    expect(t).toBe(phiTimeoutMs(slow, 8, 10_000));
    expect(t).toBeGreaterThan(15_000);
  });
});
