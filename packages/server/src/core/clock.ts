/**
 * The injected clock. Core and services never read the wall clock or schedule timers directly:
 * they take a `Clock`, so tests can drive time by hand (including jumps forward and back).
 *
 * Authority (docs/design.md §3): the coordinator's clock decides leases and timeouts on SQLite; agent
 * timestamps are informational.
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Run `fn` once after `delayMs` (clamped to ≥ 0). Timers never keep the process alive. */
  setTimer(delayMs: number, fn: () => void): TimerHandle;
}

/** A clock that moves only when told to. Timers fire in deadline order as time passes them. */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(startAt = 1_700_000_000_000) {
    this.current = startAt;
  }

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, fn: () => void): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { at: this.current + Math.max(0, delayMs), fn });
    return { cancel: () => this.timers.delete(id) };
  }

  /** Number of pending timers. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Move time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    this.set(this.current + ms);
  }

  /** Jump to `at` (forward or back). Timers due at or before `at` fire; a jump back fires nothing. */
  set(at: number): void {
    for (;;) {
      let nextId = -1;
      let next: { at: number; fn: () => void } | undefined;
      for (const [id, t] of this.timers) {
        if (t.at <= at && (next === undefined || t.at < next.at || (t.at === next.at && id < nextId))) {
          next = t;
          nextId = id;
        }
      }
      if (next === undefined) break;
      this.timers.delete(nextId);
      if (next.at > this.current) this.current = next.at;
      next.fn();
    }
    this.current = at;
  }
}
