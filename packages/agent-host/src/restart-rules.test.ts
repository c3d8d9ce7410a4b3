import { describe, expect, it } from 'vitest';
import { RestartRules } from './restart-rules.js';

const policy = {
  backoffMs: 1000,
  maxBackoffMs: 5 * 60_000,
  resetAfterMs: 10 * 60_000,
  budget: 5,
  windowMs: 10 * 60_000,
};

describe('RestartRules', () => {
  it('doubles the delay from 1 s for exits in a row, then is fatal when the budget is spent', () => {
    const r = new RestartRules(policy);
    let now = 0;
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      const d = r.onExit(now + 100, now);
      expect(d.kind).toBe('restart');
      if (d.kind === 'restart') delays.push(d.delayMs);
      now += 100 + (d.kind === 'restart' ? d.delayMs : 0);
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(r.onExit(now + 100, now)).toEqual({ kind: 'fatal', restartsInWindow: 5 });
  });

  it('caps the delay at max_backoff', () => {
    const r = new RestartRules({ ...policy, budget: 100, windowMs: 1 });
    const delays: number[] = [];
    let now = 0;
    for (let i = 0; i < 12; i++) {
      const d = r.onExit(now, now);
      if (d.kind === 'restart') delays.push(d.delayMs);
      now += 10;
    }
    expect(Math.max(...delays)).toBe(300_000);
    expect(delays.slice(-3)).toEqual([300_000, 300_000, 300_000]);
  });

  it('starts the delay over after a healthy stretch of reset_after', () => {
    const r = new RestartRules({ ...policy, budget: 100 });
    r.onExit(10, 0);
    r.onExit(20, 10);
    expect(r.onExit(30, 20)).toMatchObject({ delayMs: 4000 });
    // Up for exactly reset_after: the next delay is the first one again.
    expect(r.onExit(40 + 600_000, 40)).toMatchObject({ delayMs: 1000 });
  });

  it('forgets restarts older than the window, and a reset makes the budget whole', () => {
    const r = new RestartRules({ ...policy, budget: 2, windowMs: 1000 });
    expect(r.onExit(0, 0).kind).toBe('restart');
    expect(r.onExit(10, 0).kind).toBe('restart');
    expect(r.onExit(20, 0).kind).toBe('fatal');
    // Out of the window: allowed again.
    expect(r.onExit(1010, 1000).kind).toBe('restart');
    r.reset();
    expect(r.onExit(1020, 1010)).toMatchObject({ kind: 'restart', delayMs: 1000, restartsInWindow: 1 });
  });
});
