import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors.js';
import { leaseDeadline, resolveTiming } from './timing.js';

describe('resolveTiming', () => {
  it('fills the defaults of docs/design.md §4', () => {
    expect(resolveTiming()).toEqual({
      heartbeatIntervalMs: 5000,
      heartbeatTimeoutMs: 15000,
      claimTimeoutMs: 30000,
      executionTimeoutMs: null,
      attemptDeadlineMs: null,
      stallTimeoutMs: 300000,
    });
  });

  it('derives the timeout from the factor and the deadline from the execution timeout', () => {
    const t = resolveTiming({ heartbeatIntervalMs: 2000, timeoutFactor: 4, executionTimeoutMs: 60_000 });
    expect(t.heartbeatTimeoutMs).toBe(8000);
    expect(t.attemptDeadlineMs).toBe(90_000);
  });

  it('derives everything from expectedDurationMs (the field example: min 5 s, max 300 s)', () => {
    const t = resolveTiming({ expectedDurationMs: { min: 5000, max: 300_000 } });
    expect(t.heartbeatIntervalMs).toBe(1000); // clamp(500, 1 s, 60 s)
    expect(t.heartbeatTimeoutMs).toBe(3000);
    expect(t.executionTimeoutMs).toBe(450_000);
    expect(t.attemptDeadlineMs).toBe(675_000);
    expect(resolveTiming({ expectedDurationMs: { min: 50_000, max: 60_000 } }).heartbeatIntervalMs).toBe(
      5000,
    );
    expect(
      resolveTiming({ expectedDurationMs: { min: 3_600_000, max: 7_200_000 } }).heartbeatIntervalMs,
    ).toBe(60_000);
  });

  it('lets explicit fields win over derived ones', () => {
    const t = resolveTiming({ expectedDurationMs: { min: 5000, max: 300_000 }, heartbeatIntervalMs: 700 });
    expect(t.heartbeatIntervalMs).toBe(700);
    expect(t.heartbeatTimeoutMs).toBe(2100);
  });

  it('accepts each value at its least (100 ms; stall timeout 1 s)', () => {
    const t = resolveTiming({
      heartbeatIntervalMs: 100,
      heartbeatTimeoutMs: 101,
      claimTimeoutMs: 100,
      executionTimeoutMs: 100,
      attemptDeadlineMs: 101,
      stallTimeoutMs: 1000,
    });
    expect(t).toMatchObject({ heartbeatIntervalMs: 100, claimTimeoutMs: 100, stallTimeoutMs: 1000 });
    expect(resolveTiming({ expectedDurationMs: { min: 0, max: 67 } }).executionTimeoutMs).toBe(101);
  });

  it('rejects bad values naming the field and the rule', () => {
    const bad: [Parameters<typeof resolveTiming>[0], RegExp][] = [
      [
        { heartbeatIntervalMs: 5000, heartbeatTimeoutMs: 5000 },
        /timing.heartbeatTimeoutMs must exceed timing.heartbeatIntervalMs/,
      ],
      [
        { executionTimeoutMs: 1000, attemptDeadlineMs: 1000 },
        /timing.attemptDeadlineMs must exceed timing.executionTimeoutMs/,
      ],
      [{ heartbeatIntervalMs: 0 }, /timing.heartbeatIntervalMs must be an integer >= 100 \(milliseconds\)/],
      // a number of seconds taken for milliseconds: every agent would time out at once
      [{ heartbeatIntervalMs: 5 }, /timing.heartbeatIntervalMs must be an integer >= 100/],
      [{ heartbeatTimeoutMs: 99 }, /timing.heartbeatTimeoutMs must be an integer >= 100/],
      [{ claimTimeoutMs: 30 }, /timing.claimTimeoutMs must be an integer >= 100/],
      [{ executionTimeoutMs: 60 }, /timing.executionTimeoutMs must be an integer >= 100/],
      [{ attemptDeadlineMs: 90 }, /timing.attemptDeadlineMs must be an integer >= 100/],
      [{ stallTimeoutMs: 999 }, /timing.stallTimeoutMs must be an integer >= 1000/],
      [{ expectedDurationMs: { min: 0, max: 50 } }, /timing.expectedDurationMs.max must be >= 67/],
      [{ claimTimeoutMs: 1.5 }, /timing.claimTimeoutMs/],
      [{ timeoutFactor: 0.5 }, /timing.timeoutFactor must be a number >= 1/],
      [{ expectedDurationMs: { min: 10, max: 5 } }, /expectedDurationMs.max must be >= /],
    ];
    for (const [input, message] of bad) {
      expect(() => resolveTiming(input)).toThrow(ValidationError);
      expect(() => resolveTiming(input)).toThrow(message);
    }
  });
});

describe('leaseDeadline', () => {
  const timing = resolveTiming({ heartbeatIntervalMs: 1000, executionTimeoutMs: 10_000 });
  it('claim → claimTimeoutMs; start and heartbeat → heartbeatTimeoutMs', () => {
    expect(leaseDeadline('claim', 100, timing, null)).toBe(100 + 30_000);
    expect(leaseDeadline('start', 100, timing, 100)).toBe(100 + 3000);
    expect(leaseDeadline('heartbeat', 5000, timing, 100)).toBe(8000);
  });
  it('never extends past the attempt deadline', () => {
    expect(leaseDeadline('heartbeat', 14_000, timing, 100)).toBe(100 + 15_000);
  });
});
