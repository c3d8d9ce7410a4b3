/**
 * A job run every `intervalMs` on the injected clock, each run starting that long after the previous
 * one finished (never two at once). A run that fails is reported to `onError`; the next comes as usual.
 */
import type { Clock, TimerHandle } from '../core/clock.js';

export interface Periodic {
  start(): void;
  stop(): void;
}

export function every(
  clock: Clock,
  intervalMs: number,
  run: () => Promise<unknown>,
  onError: (err: unknown) => void,
): Periodic {
  let timer: TimerHandle | null = null;
  let running = false;
  const arm = (): void => {
    if (!running) return;
    timer = clock.setTimer(intervalMs, () => {
      timer = null;
      run().catch(onError).finally(arm);
    });
  };
  return {
    start() {
      if (running) return;
      running = true;
      arm();
    },
    stop() {
      running = false;
      timer?.cancel();
      timer = null;
    },
  };
}
