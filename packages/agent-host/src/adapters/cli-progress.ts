/**
 * Progress derived from a CLI's events (pure; the clock is passed in). A coding agent has no known
 * total, so the value grows with every turn and completed item and never reaches 1 before the end;
 * the phase counts them (`turn 2 · 5 items · 3 tools`), so it changes whenever anything completes and
 * the stall detector sees movement. While a tool call is in flight the CLI is silent on purpose: the
 * phase then names the tool and how long it has run, in steps of `tickMs`, until `capMs` — after that
 * it stops changing, and a tool that hangs becomes a stall like any silence.
 */
import type { CliEvent } from './cli-flavor.js';

/** The longest phase a heartbeat carries. */
const MAX_PHASE = 256;

/**
 * `phase` with how often the work was taken up again after a wake — a CLI's session resumed, a shell
 * command restarted — (`turn 2 · 5 items · resumed 1×`, `restarted 2×` for an empty phase), cut to
 * fit 256 characters with the count kept. The count moves the phase with each wake that acted, so the
 * stall the wake answered closes (the watchdog judges the wake by that) even before the program says
 * anything new.
 */
export function phaseAfterWakes(phase: string, verb: 'resumed' | 'restarted', wakes: number): string {
  if (wakes <= 0) return phase.slice(0, MAX_PHASE);
  const count = `${verb} ${wakes}×`;
  if (phase === '') return count;
  return `${phase.slice(0, MAX_PHASE - count.length - 3)} · ${count}`;
}

export interface ToolInFlight {
  name: string;
  since: number;
}

export class ProgressTally {
  turns = 0;
  items = 0;
  tools = 0;
  /** Runs resumed after a wake (or a retry). */
  resumes = 0;
  /**
   * Whether the current run's CLI has said anything yet. Until its first event the phase is
   * `starting`: the first event moves the progress, so the stall clock counts from the moment the
   * CLI is up and talking rather than from its spawn (a slow start is not a silent turn).
   */
  private talking = false;
  readonly inFlight = new Map<string, ToolInFlight>();

  constructor(
    /** How often a tool in flight moves the phase. */
    readonly tickMs: number,
    /** How long a tool in flight may keep the phase moving. */
    readonly capMs: number,
  ) {}

  /** Count `event`; true when it changes the progress. */
  apply(event: CliEvent, now: number): boolean {
    const first = !this.talking;
    this.talking = true;
    return this.count(event, now) || first;
  }

  private count(event: CliEvent, now: number): boolean {
    switch (event.type) {
      case 'turn_started':
        this.turns++;
        return true;
      case 'item_completed':
        this.items++;
        return true;
      case 'tool_started':
        this.tools++;
        this.inFlight.set(event.id, { name: event.name, since: now });
        return true;
      case 'tool_finished':
        return this.inFlight.delete(event.id);
      default:
        return false;
    }
  }

  /** The run ended: no tool is in flight any more, and the next run starts silent. */
  endRun(): void {
    this.inFlight.clear();
    this.talking = false;
  }

  /** The value in [0, 0.95] and the phase (≤ 256 characters) at `now`. */
  progress(now: number): { value: number; phase: string } {
    const steps = this.turns + this.items;
    const value = Math.min(0.95, Number((1 - 1 / (1 + steps / 8)).toFixed(4)));
    let phase = phaseAfterWakes(
      this.talking ? `turn ${this.turns} · ${this.items} items · ${this.tools} tools` : 'starting',
      'resumed',
      this.resumes,
    );
    const oldest = this.oldestTool();
    if (oldest !== null) {
      const ran = Math.min(now - oldest.since, this.capMs);
      const shown = Math.floor(ran / this.tickMs) * this.tickMs;
      phase += ` · ${oldest.name} running ${Math.round(shown / 1000)}s`;
    }
    return { value, phase: phase.slice(0, MAX_PHASE) };
  }

  /** True while a tool is in flight and has not run past the cap: time alone moves the phase. */
  toolTicking(now: number): boolean {
    const oldest = this.oldestTool();
    return oldest !== null && now - oldest.since < this.capMs;
  }

  private oldestTool(): ToolInFlight | null {
    let oldest: ToolInFlight | null = null;
    for (const t of this.inFlight.values()) if (oldest === null || t.since < oldest.since) oldest = t;
    return oldest;
  }
}
