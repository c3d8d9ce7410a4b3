/**
 * The heartbeat timer of an agent (worker or monitor): one beat per interval with ±10 % jitter (so a
 * fleet started together does not beat together), never two beats at once. What a beat sends is
 * injected (`beat`), as is the interval, which may change between beats (the coordinator's answer, a
 * task with a shorter interval). {@link HeartbeatLoop.beatSoon} asks for an extra beat now (a task's
 * last progress before its completion), coalescing the requests of one event-loop turn.
 */
import { type Now, systemNow } from '../clock.js';

/** Relative jitter of the heartbeat interval (±10 %, docs/design.md §4). */
export const HEARTBEAT_JITTER = 0.1;

/** The delay before the next beat: `intervalMs` ± 10 %. */
export function jitteredDelayMs(intervalMs: number, random: () => number = Math.random): number {
  return intervalMs * (1 + (random() * 2 - 1) * HEARTBEAT_JITTER);
}

export interface HeartbeatLoopDeps {
  /** The interval now (read before every beat). */
  intervalMs(): number;
  /** Send one beat; must not reject (report errors itself). */
  beat(): Promise<void>;
  random?: () => number;
  /** @default the system clock */
  now?: Now;
}

export class HeartbeatLoop {
  private readonly deps: HeartbeatLoopDeps;
  private readonly now: Now;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private dueAt = 0;
  private inFlight: Promise<void> | undefined;
  private running = false;
  /** Callers of beatSoon waiting for the next beat to start and end. */
  private soon: (() => void)[] = [];

  constructor(deps: HeartbeatLoopDeps) {
    this.deps = deps;
    this.now = deps.now ?? systemNow;
  }

  /** Start beating; the first beat comes after one (jittered) interval, or at once with `immediately`. */
  start(options: { immediately?: boolean } = {}): void {
    this.running = true;
    if (options.immediately) this.runSoon();
    else this.schedule();
  }

  /** Beat sooner if the interval shrank below the time left (a task with a shorter interval arrived). */
  nudge(): void {
    if (!this.running || this.inFlight || this.timer === undefined) return;
    if (this.dueAt - this.now() > this.deps.intervalMs() * (1 + HEARTBEAT_JITTER)) {
      clearTimeout(this.timer);
      this.schedule();
    }
  }

  /**
   * Beat now (in this event-loop turn's batch, or right after the beat in flight) instead of at the
   * next tick; resolves when a beat that started after this call has ended (or at once when stopped).
   */
  beatSoon(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      this.soon.push(resolve);
      if (this.inFlight === undefined) this.runSoon();
    });
  }

  /** Stop the timer and wait for a beat in flight. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    await this.inFlight;
    for (const resolve of this.soon.splice(0)) resolve();
  }

  private schedule(): void {
    const delayMs = jitteredDelayMs(this.deps.intervalMs(), this.deps.random);
    this.dueAt = this.now() + delayMs;
    this.timer = setTimeout(this.tick, delayMs);
  }

  private runSoon(): void {
    if (this.immediate !== undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.immediate = setImmediate(this.tick);
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    this.immediate = undefined;
    if (!this.running) return;
    const waiting = this.soon;
    this.soon = [];
    this.inFlight = this.deps
      .beat()
      .catch(() => {})
      .finally(() => {
        this.inFlight = undefined;
        for (const resolve of waiting) resolve();
        if (!this.running) return;
        if (this.soon.length > 0) this.runSoon();
        else this.schedule();
      });
  };
}
