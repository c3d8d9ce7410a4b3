/**
 * The wall clock, for the process edge only (server assembly, CLI). Core and services never read it
 * directly: they take a `Clock` (core/clock.ts), which is this one in production.
 */
import type { Clock } from './core/clock.js';

/** The real clock: `Date.now()` and unref'd `setTimeout`. */
export function systemClock(): Clock {
  return {
    now: () => Date.now(),
    setTimer(delayMs, fn) {
      const t = setTimeout(fn, Math.max(0, delayMs));
      t.unref?.();
      return { cancel: () => clearTimeout(t) };
    },
  };
}
