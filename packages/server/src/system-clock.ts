/**
 * The wall clock, for the process edge only (server assembly, CLI). Core and services never read it
 * directly: they take a `Clock` (core/clock.ts), which is this one in production.
 */
import type { Clock } from './core/clock.js';

/** Node runs a `setTimeout` longer than this after 1 ms (with a warning). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * The real clock: `Date.now()` and unref'd `setTimeout`. A delay past ~24.8 days fires at that cap
 * instead: every caller re-checks the time when its timer fires and re-arms, so a task scheduled a
 * month ahead costs one wake-up every 24.8 days, not a 1 ms spin.
 */
export function systemClock(): Clock {
  return {
    now: () => Date.now(),
    setTimer(delayMs, fn) {
      const t = setTimeout(fn, Math.min(MAX_TIMER_DELAY_MS, Math.max(0, delayMs)));
      t.unref?.();
      return { cancel: () => clearTimeout(t) };
    },
  };
}
