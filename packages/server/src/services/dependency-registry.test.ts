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
    const { status: s } = deps.report('openai', { state: 'rate_limited', retryAfterMs: 20_000 }, 'agent:a');
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

  it('takes a stored record only when it is newer than its copy, and wakes claimers when it unblocks', () => {
    const { clock, deps, available, t0 } = setup();
    const stored = {
      name: 'openai',
      state: 'down' as const,
      until: t0 + 30_000,
      since: t0,
      reportedBy: 'agent:b',
      message: 'x',
    };
    expect(deps.apply({ ...stored, version: 2 })).toBe(true);
    expect(deps.unavailable()).toEqual(['openai']);
    expect(deps.apply({ ...stored, state: 'up', until: null, version: 1 })).toBe(false); // older
    expect(deps.apply({ ...stored, state: 'up', until: null, version: 2 })).toBe(false); // the same
    expect(deps.unavailable()).toEqual(['openai']);
    expect(available).toEqual([]);
    expect(deps.apply({ ...stored, state: 'up', until: null, version: 3 })).toBe(true);
    expect(deps.unavailable()).toBeUndefined();
    expect(available).toEqual(['openai']);
    // A stored block ends by itself at its `until`.
    deps.apply({ ...stored, until: clock.now() + 5000, version: 4 });
    clock.advance(5000);
    expect(deps.unavailable()).toBeUndefined();
    expect(available).toEqual(['openai', 'openai']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('says whether a report is news to the store: a repeated up is not, a renewed down is', () => {
    const { clock, deps } = setup();
    expect(deps.report('db', { state: 'up' }, 'agent:a').news).toBe(true); // never stored
    const { record } = deps.report('db', { state: 'up' }, 'agent:a');
    deps.apply({ ...record, version: 1 });
    expect(deps.report('db', { state: 'up' }, 'agent:b').news).toBe(false);
    expect(deps.report('db', { state: 'down' }, 'agent:b').news).toBe(true);
    deps.apply({ ...deps.report('db', { state: 'down' }, 'agent:b').record, version: 2 });
    clock.advance(1000);
    expect(deps.report('db', { state: 'down' }, 'agent:b').news).toBe(true); // `until` moves on
  });
});
