import { describe, expect, it } from 'vitest';
import { ManualClock } from '../core/clock.js';
import { createDependencyRegistry } from './dependency-registry.js';

function setup() {
  const clock = new ManualClock(1_000_000);
  const available: string[] = [];
  const deps = createDependencyRegistry({ clock, ttlMs: 60_000, onAvailable: (n) => available.push(n) });
  return { clock, deps, available, t0: clock.now() };
}

describe('dependency registry', () => {
  it('rate_limited with retryAfterMs blocks until then, then is up again and wakes claimers', () => {
    const { clock, deps, available, t0 } = setup();
    expect(deps.unavailable()).toBeUndefined();
    const s = deps.report('openai', { state: 'rate_limited', retryAfterMs: 20_000 }, 'agent:a');
    expect(s).toMatchObject({
      name: 'openai',
      state: 'rate_limited',
      until: t0 + 20_000,
      since: t0,
      reportedBy: 'agent:a',
    });
    expect(deps.unavailable()).toEqual(['openai']);
    clock.advance(19_999);
    expect(deps.unavailable()).toEqual(['openai']);
    clock.advance(1);
    expect(deps.unavailable()).toBeUndefined();
    expect(available).toEqual(['openai']);
    expect(deps.list()[0]).toMatchObject({ state: 'up', since: t0 + 20_000 });
  });

  it('down without retryAfterMs holds for the TTL unless repeated; reporting up ends it at once', () => {
    const { clock, deps, available, t0 } = setup();
    deps.report('db', { state: 'down' }, 'admin');
    clock.advance(50_000);
    deps.report('db', { state: 'down', message: 'still down' }, 'admin');
    expect(deps.list()[0]).toMatchObject({
      state: 'down',
      since: t0,
      until: t0 + 110_000,
      message: 'still down',
    });
    clock.advance(20_000);
    expect(deps.unavailable()).toEqual(['db']);
    deps.report('db', { state: 'up' }, 'admin');
    expect(deps.unavailable()).toBeUndefined();
    expect(available).toEqual(['db']);
    expect(clock.pendingTimers).toBe(0);
  });
});
