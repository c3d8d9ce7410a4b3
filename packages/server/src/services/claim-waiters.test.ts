import { describe, expect, it } from 'vitest';
import { ManualClock } from '../core/clock.js';
import { createClaimWaiters, type WaitResult } from './claim-waiters.js';

const settle = () => new Promise((r) => setImmediate(r));

function setup() {
  const clock = new ManualClock(1_000_000);
  const waiters = createClaimWaiters(clock);
  const results: Record<string, WaitResult> = {};
  const wait = (name: string, types: string[], untilMs = 20_000, max = 1, signal?: AbortSignal) => {
    void waiters.wait({ agentId: name, types, max, until: clock.now() + untilMs, signal }).then((r) => {
      results[name] = r;
    });
  };
  return { clock, waiters, results, wait };
}

describe('claim waiters', () => {
  it('notify wakes waiters of that type in FIFO order, only as many as the work needs', async () => {
    const { waiters, results, wait } = setup();
    wait('a', ['x']);
    wait('b', ['x']);
    wait('c', ['y']);
    waiters.notify('x', 1);
    await settle();
    expect(results).toEqual({ a: 'woken' });
    waiters.notify('x', 5);
    await settle();
    expect(results).toEqual({ a: 'woken', b: 'woken' });
    expect(waiters.waiting).toBe(1);
  });

  it("counts capacity by each waiter's max", async () => {
    const { waiters, results, wait } = setup();
    wait('big', ['x'], 20_000, 16);
    wait('small', ['x']);
    waiters.notify('x', 10);
    await settle();
    expect(results).toEqual({ big: 'woken' });
  });

  it('a waiter for several types wakes once and leaves every queue', async () => {
    const { waiters, results, wait } = setup();
    wait('a', ['x', 'y']);
    waiters.notify('y');
    await settle();
    expect(results.a).toBe('woken');
    expect(waiters.waitingAgents('x').size).toBe(0);
  });

  it('times out at its deadline', async () => {
    const { clock, results, wait } = setup();
    wait('a', ['x'], 1000);
    clock.advance(999);
    await settle();
    expect(results.a).toBeUndefined();
    clock.advance(1);
    await settle();
    expect(results.a).toBe('timeout');
    expect(clock.pendingTimers).toBe(0);
  });

  it('notifyAt wakes at that time (runAt, backoff)', async () => {
    const { clock, waiters, results, wait } = setup();
    wait('a', ['x']);
    waiters.notifyAt('x', clock.now() + 2000);
    clock.advance(1999);
    await settle();
    expect(results.a).toBeUndefined();
    clock.advance(1);
    await settle();
    expect(results.a).toBe('woken');
  });

  it("abort and stop end waits; releaseAgent ends one agent's waits", async () => {
    const { waiters, results, wait } = setup();
    const ac = new AbortController();
    wait('a', ['x'], 20_000, 1, ac.signal);
    wait('b', ['x']);
    wait('c', ['x']);
    ac.abort();
    waiters.releaseAgent('b');
    await settle();
    expect(results).toEqual({ a: 'aborted', b: 'stopped' });
    waiters.stop();
    await settle();
    expect(results.c).toBe('stopped');
    expect(await waiters.wait({ agentId: 'd', types: ['x'], max: 1, until: 0 })).toBe('stopped');
  });

  it('epochOf grows on every notification for those types (so a claimer never misses one between look and wait)', () => {
    const { waiters } = setup();
    const e = waiters.epochOf(['x', 'y']);
    waiters.notify('x');
    expect(waiters.epochOf(['x', 'y'])).toBe(e + 1);
    waiters.notify('other');
    expect(waiters.epochOf(['x', 'y'])).toBe(e + 1);
    waiters.notifyAll();
    expect(waiters.epochOf(['x', 'y'])).toBe(e + 2);
    expect(waiters.epochOf(['other'])).toBe(2);
  });

  it('notifyAll wakes everyone', async () => {
    const { waiters, results, wait } = setup();
    wait('a', ['x']);
    wait('b', ['y']);
    waiters.notifyAll();
    await settle();
    expect(results).toEqual({ a: 'woken', b: 'woken' });
  });
});
