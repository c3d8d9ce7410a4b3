import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelayMs, DEFAULT_BACKOFF, resolveBackoffOptions } from './backoff.js';
import { ValidationError } from './errors.js';

describe('backoff', () => {
  it('is 1 s, 2 s, 4 s, ... capped at 5 min by default', () => {
    expect([1, 2, 3, 4].map((r) => backoffDelayMs(r))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelayMs(9)).toBe(256_000);
    expect(backoffDelayMs(10)).toBe(300_000);
    expect(backoffDelayMs(10_000)).toBe(300_000);
  });

  it('treats retry < 1 as the first retry', () => {
    expect(backoffDelayMs(0)).toBe(1000);
    expect(backoffDelayMs(-3)).toBe(1000);
  });

  it('jitter stays within ±jitter of the base delay and never passes the cap', () => {
    const opts = resolveBackoffOptions({ jitter: 0.2 });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 1, noNaN: true }), (retry, r) => {
        const raw = backoffDelayMs(retry, DEFAULT_BACKOFF);
        const d = backoffDelayMs(retry, opts, () => r);
        return d >= Math.floor(raw * 0.8) && d <= Math.min(opts.capMs, Math.ceil(raw * 1.2));
      }),
    );
  });

  it('rejects bad options naming the option and the rule', () => {
    expect(() => resolveBackoffOptions({ baseMs: -1 })).toThrow(/backoff.baseMs must be an integer >= 0/);
    expect(() => resolveBackoffOptions({ baseMs: 10, capMs: 5 })).toThrow(ValidationError);
    expect(() => resolveBackoffOptions({ jitter: 2 })).toThrow(/backoff.jitter/);
  });
});
