/**
 * When a program that exited is started again (docs/design.md §6.6), as pure rules over the times
 * they are given: the delay doubles from `backoffMs` up to `maxBackoffMs` with each exit in a row,
 * and starts over once a process stayed up for `resetAfterMs`; at most `budget` restarts within any
 * `windowMs` — the next exit inside the window is `fatal` (no more restarts until a person or a
 * `restart` command starts it again), as systemd's StartLimit or an Erlang supervisor's intensity.
 */

export interface RestartPolicy {
  /** The first delay. */
  backoffMs: number;
  /** Delays double up to this. */
  maxBackoffMs: number;
  /** A process up this long resets the delay to `backoffMs`. */
  resetAfterMs: number;
  /** Restarts allowed within `windowMs`. */
  budget: number;
  windowMs: number;
}

export type RestartDecision =
  | { kind: 'restart'; delayMs: number; restartsInWindow: number }
  | { kind: 'fatal'; restartsInWindow: number };

/** The restart state of one program instance. */
export class RestartRules {
  /** Exits in a row without a healthy stretch between them. */
  private consecutive = 0;
  /** When the restarts inside the window were decided, oldest first. */
  private recent: number[] = [];

  constructor(private readonly policy: RestartPolicy) {}

  /** The process started at `startedAt` exited at `now` without being asked to: what next. */
  onExit(now: number, startedAt: number): RestartDecision {
    if (now - startedAt >= this.policy.resetAfterMs) this.consecutive = 0;
    this.recent = this.recent.filter((at) => now - at < this.policy.windowMs);
    if (this.recent.length >= this.policy.budget) {
      return { kind: 'fatal', restartsInWindow: this.recent.length };
    }
    const delayMs = Math.min(this.policy.backoffMs * 2 ** this.consecutive, this.policy.maxBackoffMs);
    this.consecutive++;
    this.recent.push(now);
    return { kind: 'restart', delayMs, restartsInWindow: this.recent.length };
  }

  /** A deliberate start (a `restart` command, a fatal program started again): the budget is whole again. */
  reset(): void {
    this.consecutive = 0;
    this.recent = [];
  }
}
