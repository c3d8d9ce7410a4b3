/**
 * One run of a coding-agent CLI (one process; an attempt may hold several when a wake resumes the
 * session): its home prepared, started in a process group of its own, its output lines handed on as
 * lines and as the flavor's events, its result remembered, and its end — with whatever the adapter did
 * to it (an interrupt for a wake, a kill after the final grace) — told as a {@link RunEnd}.
 */
import type { CliEvent, CliFlavor, CliRunPlan } from './cli-flavor.js';
import type { RunEnd, StopCause } from './cli-outcome.js';
import { findExecutable } from './executable.js';
import type { GroupRegistry } from './group-guard.js';
import { type GroupExit, outsideNote, ProcessGroup } from './process-group.js';

export type ResultEvent = Extract<CliEvent, { type: 'result' }>;

export interface CliRunDeps {
  flavor: CliFlavor;
  bin: string;
  /** The environment the CLI starts from (the flavor's and `--cli-env` values are added). */
  baseEnv: NodeJS.ProcessEnv;
  plan: CliRunPlan;
  /** After the result, how long the process has to exit before its group is killed. */
  finalGraceMs: number;
  /** After an interrupt, how long the process has to exit before its group is stopped. */
  interruptGraceMs: number;
  stopGraceMs: number;
  onEvent(event: CliEvent): void;
  onLine(line: string, stream: 'stdout' | 'stderr'): void;
  /** The adapter's own notes about the run (signals that reached processes outside its group). */
  onNote?(text: string): void;
  /** Where the CLI's group is listed so that it dies with the agent (group-guard.ts). */
  guard?: GroupRegistry | null;
}

const STDERR_TAIL = 5;

export class CliRun {
  result: ResultEvent | null = null;
  /** The last assistant message seen. */
  lastMessage: string | null = null;
  /** A session event came (a resume the CLI accepted, or a new session). */
  sawSession = false;
  stoppedBy: StopCause | null = null;
  /** The last few stderr lines, for a failure's message. */
  readonly stderrTail: string[] = [];
  readonly ended: Promise<RunEnd>;

  private readonly group: ProcessGroup;
  private graceTimer: NodeJS.Timeout | undefined;

  private constructor(private readonly deps: CliRunDeps) {
    const { flavor, plan } = deps;
    const parse = flavor.parser();
    const command = flavor.command(plan);
    const env = { ...deps.baseEnv, ...command.env, ...plan.extraEnv };
    this.group = ProcessGroup.spawn({
      file: deps.bin,
      args: command.args,
      cwd: plan.cwd,
      env,
      guard: deps.guard ?? null,
      onOutside: (procs, signal) => deps.onNote?.(outsideNote(procs, signal, 'CLI')),
      onStdout: (line) => {
        deps.onLine(line, 'stdout');
        let events: CliEvent[];
        try {
          events = parse(line);
        } catch (err) {
          events = [{ type: 'notice', detail: `unreadable output line: ${(err as Error).message}` }];
        }
        for (const e of events) this.take(e);
      },
      onStderr: (line) => {
        deps.onLine(line, 'stderr');
        this.stderrTail.push(line.slice(0, 500));
        if (this.stderrTail.length > STDERR_TAIL) this.stderrTail.shift();
      },
    });
    this.ended = this.group.exited.then(async (exit) => {
      clearTimeout(this.graceTimer);
      // whatever it left in its group (a tool's child) goes with it
      await this.group.stop({ graceMs: 0 });
      const end: RunEnd = { result: this.result, exit, stoppedBy: this.stoppedBy };
      if (exit.spawnError !== undefined) {
        // a failed start: is the executable gone (or no longer executable)?
        const lookup = findExecutable(deps.bin, env, plan.cwd);
        if (!lookup.found) end.binMissing = lookup.why;
      }
      return end;
    });
  }

  static async start(deps: CliRunDeps): Promise<CliRun> {
    await deps.flavor.prepareHome(deps.plan);
    return new CliRun(deps);
  }

  get pid(): number | null {
    return this.group.pid;
  }

  get running(): boolean {
    return this.group.running;
  }

  /** Interrupt the turn (a wake): the flavor's signal to the CLI itself, then a stop if it lingers. */
  interrupt(): void {
    if (!this.group.running || this.stoppedBy !== null) return;
    this.stoppedBy = 'wake';
    this.group.signalLeader(this.deps.flavor.interruptSignal);
    const t = setTimeout(() => {
      if (this.group.running) void this.group.stop({ graceMs: this.deps.stopGraceMs });
    }, this.deps.interruptGraceMs);
    t.unref();
    void this.ended.then(() => clearTimeout(t));
  }

  /** Stop the whole group: SIGTERM, `graceMs`, SIGKILL. */
  stop(graceMs: number): Promise<GroupExit> {
    return this.group.stop({ graceMs });
  }

  private take(event: CliEvent): void {
    if (event.type === 'session') this.sawSession = true;
    if (event.type === 'message') this.lastMessage = event.text;
    if (event.type === 'result') {
      this.result = event;
      if (this.graceTimer === undefined) {
        this.graceTimer = setTimeout(() => {
          if (!this.group.running) return;
          this.stoppedBy ??= 'final_grace';
          void this.group.stop({ graceMs: Math.min(1000, this.deps.stopGraceMs) });
        }, this.deps.finalGraceMs);
        this.graceTimer.unref();
      }
    }
    this.deps.onEvent(event);
  }
}
