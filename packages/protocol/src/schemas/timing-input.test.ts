import { describe, expect, it } from 'vitest';
import { timingInput } from './index.js';

describe('timingInput', () => {
  it('refuses timing values too small to be meant (a number of seconds sent as milliseconds)', () => {
    const least = {
      heartbeatIntervalMs: 100,
      heartbeatTimeoutMs: 100,
      claimTimeoutMs: 100,
      executionTimeoutMs: 100,
      attemptDeadlineMs: 100,
      stallTimeoutMs: 1000,
    };
    expect(timingInput.safeParse(least).success).toBe(true);
    for (const [field, min] of Object.entries(least)) {
      const r = timingInput.safeParse({ ...least, [field]: min - 1 });
      expect(r.success, field).toBe(false);
      expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual([field]);
    }
  });
});
