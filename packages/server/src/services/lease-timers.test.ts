import { describe, expect, it } from 'vitest';
import { ManualClock } from '../core/clock.js';
import { type DueLease, LeaseTimers } from './lease-timers.js';

function setup() {
  const clock = new ManualClock(1_000_000);
  const due: (DueLease & { firedAt: number })[] = [];
  const timers = new LeaseTimers(clock, (l) => due.push({ ...l, firedAt: clock.now() }));
  return { clock, due, timers, t0: clock.now() };
}

describe('LeaseTimers', () => {
  it('fires exactly at the deadline, not a millisecond before', () => {
    const { clock, due, timers, t0 } = setup();
    timers.track('a', 1, t0 + 15_000);
    clock.advance(14_999);
    expect(due).toEqual([]);
    clock.advance(1);
    expect(due).toEqual([
      { taskId: 'a', version: 1, leaseExpiresAt: t0 + 15_000, writeBack: false, firedAt: t0 + 15_000 },
    ]);
    expect(timers.size).toBe(0);
  });

  it('keeps one clock timer armed for the earliest deadline, whatever the number of leases', () => {
    const { clock, timers, t0 } = setup();
    for (let i = 0; i < 1000; i++) timers.track(`t${i}`, 1, t0 + 10_000 + i);
    expect(clock.pendingTimers).toBe(1);
    timers.track('early', 1, t0 + 5);
    expect(clock.pendingTimers).toBe(1);
  });

  it('fires in deadline order', () => {
    const { clock, due, timers, t0 } = setup();
    timers.track('c', 1, t0 + 300);
    timers.track('a', 1, t0 + 100);
    timers.track('b', 1, t0 + 200);
    clock.advance(1000);
    expect(due.map((d) => [d.taskId, d.firedAt - t0])).toEqual([
      ['a', 100],
      ['b', 200],
      ['c', 300],
    ]);
  });

  it('a renewal moves the deadline later; only the latest one fires', () => {
    const { clock, due, timers, t0 } = setup();
    timers.track('a', 1, t0 + 15_000);
    clock.advance(5000);
    timers.track('a', 1, t0 + 20_000);
    clock.advance(10_000);
    timers.track('a', 1, t0 + 30_000);
    clock.advance(14_999);
    expect(due).toEqual([]);
    clock.advance(1);
    expect(due.map((d) => d.firedAt - t0)).toEqual([30_000]);
  });

  it('a shorter deadline (a new version) fires at the shorter time, once', () => {
    const { clock, due, timers, t0 } = setup();
    timers.track('a', 1, t0 + 30_000);
    timers.track('a', 2, t0 + 1000);
    clock.advance(60_000);
    expect(due.map((d) => [d.version, d.firedAt - t0])).toEqual([[2, 1000]]);
  });

  it('untrack stops it; untrack with an older version does not remove a newer lease', () => {
    const { clock, due, timers, t0 } = setup();
    timers.track('a', 1, t0 + 100);
    timers.untrack('a');
    timers.track('b', 3, t0 + 100);
    timers.untrack('b', 2);
    clock.advance(200);
    expect(due.map((d) => d.taskId)).toEqual(['b']);
  });

  it('keeps the write-back flag for the same version unless told otherwise', () => {
    const { clock, due, timers, t0 } = setup();
    timers.track('a', 1, t0 + 100, true);
    timers.track('a', 1, t0 + 200);
    timers.track('b', 1, t0 + 100, true);
    timers.track('b', 2, t0 + 300);
    clock.advance(1000);
    expect(due.map((d) => [d.taskId, d.writeBack])).toEqual([
      ['a', true],
      ['b', false],
    ]);
  });

  it('tracking after a deadline already passed fires on the next tick', () => {
    const { clock, due, timers, t0 } = setup();
    timers.track('late', 1, t0 - 50);
    expect(due).toEqual([]);
    clock.advance(0);
    expect(due.map((d) => d.taskId)).toEqual(['late']);
  });

  it('a clock jump forward fires everything due, a jump back fires nothing early', () => {
    const { clock, due, timers, t0 } = setup();
    timers.track('a', 1, t0 + 1000);
    timers.track('b', 1, t0 + 2000);
    clock.set(t0 - 60_000);
    expect(due).toEqual([]);
    clock.set(t0 + 5000);
    expect(due.map((d) => d.taskId)).toEqual(['a', 'b']);
  });

  it('handles 100k leases with frequent renewals without the heap growing unbounded', () => {
    const { clock, due, timers, t0 } = setup();
    const n = 100_000;
    for (let i = 0; i < n; i++) timers.track(`t${i}`, 1, t0 + 15_000 + (i % 1000));
    const started = performance.now();
    for (let round = 1; round <= 5; round++) {
      clock.advance(5000);
      for (let i = 0; i < n; i++) timers.track(`t${i}`, 1, clock.now() + 15_000 + (i % 1000));
    }
    const ms = performance.now() - started;
    expect(due).toEqual([]);
    expect(timers.size).toBe(n);
    expect(timers.heapSize).toBeLessThanOrEqual(2 * n + 1024);
    clock.advance(16_000);
    expect(due.length).toBe(n);
    expect(timers.size).toBe(0);
    expect(ms).toBeLessThan(5000);
  });

  it('keeps the heap bounded when leases end long before their deadlines (a busy coordinator)', () => {
    const { clock, due, timers, t0 } = setup();
    timers.track('held', 1, t0 + 60_000);
    // 50,000 tasks claimed and completed within a second, each with a 15 s lease: none fires.
    for (let i = 0; i < 50_000; i++) {
      timers.track(`t${i}`, 1, clock.now() + 15_000);
      timers.untrack(`t${i}`, 1);
      if (i % 50 === 49) clock.advance(1);
    }
    expect(timers.size).toBe(1);
    expect(timers.heapSize).toBeLessThanOrEqual(2 * 1 + 1024 + 1);
    // The one still held fires at its deadline, and only it.
    clock.set(t0 + 60_000);
    expect(due.map((d) => d.taskId)).toEqual(['held']);
    expect(timers.heapSize).toBe(0);
  });

  it('stop cancels the timer and forgets every lease', () => {
    const { clock, due, timers, t0 } = setup();
    timers.track('a', 1, t0 + 10);
    timers.stop();
    expect(clock.pendingTimers).toBe(0);
    timers.track('b', 1, t0 + 10);
    clock.advance(100);
    expect(due).toEqual([]);
  });
});
