/**
 * The heartbeat timer: one beat per interval with ±10 % jitter (so a fleet started together does not
 * beat together), never two beats at once. What a beat sends is injected (`beat`), as is the interval,
 * which may change between beats (the coordinator's answer, a task with a shorter interval).
 */

import type { AgentHeartbeatRequest, TaskBeat } from '@rouse/protocol';
import { MAX_HEARTBEAT_BYTES } from '@rouse/protocol';
import { type Now, systemNow } from '../clock.js';

/** Relative jitter of the heartbeat interval (±10 %, DESIGN.md §4). */
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
  private timer: NodeJS.Timeout | undefined;
  private dueAt = 0;
  private inFlight: Promise<void> | undefined;
  private running = false;

  private readonly now: Now;

  constructor(deps: HeartbeatLoopDeps) {
    this.deps = deps;
    this.now = deps.now ?? systemNow;
  }

  start(): void {
    this.running = true;
    this.schedule();
  }

  /** Beat sooner if the interval shrank below the time left (a task with a shorter interval arrived). */
  nudge(): void {
    if (!this.running || this.inFlight || this.timer === undefined) return;
    if (this.dueAt - this.now() > this.deps.intervalMs() * (1 + HEARTBEAT_JITTER)) {
      clearTimeout(this.timer);
      this.schedule();
    }
  }

  /** Stop the timer and wait for a beat in flight. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  private schedule(): void {
    const delayMs = jitteredDelayMs(this.deps.intervalMs(), this.deps.random);
    this.dueAt = this.now() + delayMs;
    this.timer = setTimeout(this.tick, delayMs);
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    this.inFlight = this.deps
      .beat()
      .catch(() => {})
      .finally(() => {
        this.inFlight = undefined;
        if (this.running) this.schedule();
      });
  };
}

/**
 * Split an agent heartbeat whose body would exceed `maxBytes` (the coordinator refuses larger ones with
 * 413) into several: the first carries status, metrics and dependencies, each carries a share of the
 * task beats.
 */
export function splitHeartbeat(
  req: AgentHeartbeatRequest,
  maxBytes = MAX_HEARTBEAT_BYTES,
): AgentHeartbeatRequest[] {
  const tasks = req.tasks ?? [];
  const { tasks: _omit, ...head } = req;
  const headBytes = Buffer.byteLength(JSON.stringify({ ...head, tasks: [] }));
  if (headBytes + tasks.reduce((n, t) => n + beatBytes(t), 0) <= maxBytes) return [req];
  const out: AgentHeartbeatRequest[] = [];
  let current: TaskBeat[] = [];
  let bytes = headBytes;
  for (const beat of tasks) {
    const b = beatBytes(beat);
    if (current.length > 0 && bytes + b > maxBytes) {
      out.push(out.length === 0 ? { ...head, tasks: current } : { tasks: current });
      current = [];
      bytes = 20;
    }
    current.push(beat);
    bytes += b;
  }
  if (current.length > 0 || out.length === 0)
    out.push(out.length === 0 ? { ...head, tasks: current } : { tasks: current });
  return out;
}

function beatBytes(beat: TaskBeat): number {
  // +1 for the comma between entries
  return Buffer.byteLength(JSON.stringify(beat)) + 1;
}
