import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.js';

describe('ManualClock', () => {
  it('fires timers in deadline order as time passes them, with now() at each deadline', () => {
    const clock = new ManualClock(0);
    const fired: [string, number][] = [];
    clock.setTimer(300, () => fired.push(['c', clock.now()]));
    clock.setTimer(100, () => fired.push(['a', clock.now()]));
    clock.setTimer(200, () => fired.push(['b', clock.now()]));
    clock.advance(250);
    expect(fired).toEqual([
      ['a', 100],
      ['b', 200],
    ]);
    expect(clock.now()).toBe(250);
    clock.advance(100);
    expect(fired.at(-1)).toEqual(['c', 300]);
  });

  it('cancelled timers never fire; timers set from a timer fire in the same advance when due', () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.setTimer(10, () => fired.push('x')).cancel();
    clock.setTimer(10, () => clock.setTimer(5, () => fired.push('chained')));
    clock.advance(20);
    expect(fired).toEqual(['chained']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a jump back fires nothing and later timers still fire at their deadline', () => {
    const clock = new ManualClock(1000);
    const fired: number[] = [];
    clock.setTimer(500, () => fired.push(clock.now()));
    clock.set(200);
    expect(fired).toEqual([]);
    clock.set(1499);
    expect(fired).toEqual([]);
    clock.set(1500);
    expect(fired).toEqual([1500]);
  });
});
