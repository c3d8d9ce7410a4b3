/**
 * Times `iteration()`s for the heartbeat's `metrics.iterationMs` (the watchdog compares it with the
 * agent type's p95 baseline and with `max_iteration`). A beat carries the longest iteration that ended
 * since the previous beat — or, when one still running has already taken longer, its time so far, so
 * a hung iteration shows before it ends. Nothing when no iteration ran since.
 */
export class IterationClock {
  /** Finished iterations, in total. */
  count = 0;
  private readonly running = new Map<number, number>();
  private seq = 0;
  private longestEnded: number | undefined;
  private readonly now: () => number;

  /** `now`: a monotonic clock in ms. @default performance.now */
  constructor(now: () => number = () => performance.now()) {
    this.now = now;
  }

  begin(): number {
    const id = ++this.seq;
    this.running.set(id, this.now());
    return id;
  }

  /** The iteration ended; returns how long it took (ms). */
  end(id: number): number {
    const startedAt = this.running.get(id);
    this.running.delete(id);
    const ms = startedAt === undefined ? 0 : this.now() - startedAt;
    this.count++;
    this.longestEnded = Math.max(this.longestEnded ?? 0, ms);
    return ms;
  }

  /** The value for the next beat (ms, rounded), and reset; undefined when nothing ran. */
  take(): number | undefined {
    let ms = this.longestEnded;
    const now = this.now();
    for (const startedAt of this.running.values()) ms = Math.max(ms ?? 0, now - startedAt);
    this.longestEnded = undefined;
    return ms === undefined ? undefined : Math.round(ms);
  }
}
