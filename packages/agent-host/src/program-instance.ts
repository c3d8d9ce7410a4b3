/**
 * One running instance of a program (`<name>/<program>-<n>`): its process, started in a process group
 * of its own; its output (a bounded ring, and the progress regex of a plain program); restarts with
 * backoff inside a budget (`restart-rules.ts`), then `fatal`; and stopping: the stop signal to the
 * whole group, `grace`, then SIGKILL to the group — done only once the child's `exit` event came and
 * no live process is left in its group. The processes it started that left the group (a daemon, a
 * `setsid` command, one init adopted) carry its marker (process-marks.ts) and get the same signals;
 * after an exit of its own, whatever it left behind is SIGKILLed before the next start.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { SupervisedChild, SupervisedState } from '@rouse/protocol';
import type { ResolvedProgram } from './host-config.js';
import { OutputRing } from './output-ring.js';
import { readProcTable, type TreeSample } from './proc-stat.js';
import {
  groupAlive,
  markedEnv,
  markedOutside,
  newMark,
  noteStrays,
  type Strays,
  signalEach,
  stillAlive,
} from './process-marks.js';
import { RestartRules } from './restart-rules.js';

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  at: number;
}

/** What an instance tells its supervisor. */
export type InstanceEvent =
  | { event: 'started'; key: string; pid: number }
  | {
      event: 'exited';
      key: string;
      pid: number;
      code: number | null;
      signal: string | null;
      expected: boolean;
    }
  | { event: 'restart_scheduled'; key: string; delayMs: number; restartsInWindow: number }
  | { event: 'fatal'; key: string; restarts: number }
  | { event: 'spawn_failed'; key: string; message: string };

export interface InstanceDeps {
  /** The child's environment (the supervisor adds the ROUSE_* variables). */
  env(instance: ProgramInstance): Record<string, string>;
  now(): number;
  emit(event: InstanceEvent): void;
  /** A process started (a plain program's agent registers here). */
  started?(instance: ProgramInstance): void;
  /** Each complete line the child wrote (to echo it), if wanted. */
  line?(instance: ProgramInstance, line: string): void;
}

const POLL_MS = 50;
/** How long to wait for the group to be gone after SIGKILL before giving up on it. */
const KILL_WAIT_MS = 5000;

export class ProgramInstance {
  readonly key: string;
  readonly ring = new OutputRing();
  state: SupervisedState = 'stopped';
  pid: number | null = null;
  /** Restarts after exits (not counting deliberate ones). */
  restarts = 0;
  startedAt = 0;
  lastExit: ExitInfo | null = null;
  outputAt: number | null = null;
  progress: number | undefined;
  phase: string | undefined;
  /** A plain program's agent, registered by the supervisor at each start. */
  agent: { id: string; incarnation: number; token: string; pid: number } | null = null;

  private child: ChildProcess | null = null;
  /** The marker the running process and its descendants inherit. */
  private mark = '';
  private exited: Promise<ExitInfo> | null = null;
  private stopping = false;
  /** The supervisor is stopping: nothing starts again. */
  private closed = false;
  /** Commands for this instance run one at a time, in order. */
  private queue: Promise<unknown> = Promise.resolve();
  private backoff: NodeJS.Timeout | null = null;
  private readonly rules: RestartRules;

  constructor(
    readonly program: ResolvedProgram,
    readonly instance: number,
    supervisorName: string,
    private readonly deps: InstanceDeps,
  ) {
    this.key = `${supervisorName}/${program.name}-${instance}`;
    this.rules = new RestartRules(program.restart);
  }

  /**
   * This child's entry in its supervisor's heartbeat, with `sample` from /proc when it runs (for a
   * plain program, the entry is its agent's heartbeat).
   */
  entry(sample: TreeSample | undefined): SupervisedChild {
    // The registered agent is this process's only if it registered for this pid.
    const agent = this.agent !== null && this.agent.pid === this.pid ? this.agent : null;
    return {
      agentKey: this.key,
      ...(agent !== null ? { agentId: agent.id, incarnation: agent.incarnation } : {}),
      program: this.program.name,
      instance: this.instance,
      plain: !this.program.sdk,
      pid: this.pid,
      state: this.state,
      restarts: this.restarts,
      ...(sample !== undefined ? { rssBytes: sample.rssBytes } : {}),
      ...(sample !== undefined && sample.cpuPercent !== null ? { cpuPercent: sample.cpuPercent } : {}),
      outputAt: this.outputAt,
      ...(this.progress !== undefined ? { progress: this.progress } : {}),
      ...(this.phase !== undefined ? { phase: this.phase } : {}),
      lastExit: this.lastExit,
    };
  }

  start(): void {
    this.clearBackoff();
    if (this.closed) return;
    const [file, ...args] = this.program.command;
    let child: ChildProcess;
    const mark = newMark();
    try {
      child = spawn(file!, args, {
        cwd: this.program.cwd,
        env: markedEnv(this.deps.env(this), mark),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      this.deps.emit({ event: 'spawn_failed', key: this.key, message: (err as Error).message });
      this.onExit(null, { code: null, signal: null, at: this.deps.now() });
      return;
    }
    this.child = child;
    this.mark = mark;
    this.pid = child.pid ?? null;
    this.startedAt = this.deps.now();
    this.state = 'running';
    this.progress = undefined;
    this.phase = undefined;
    const onOutput = (chunk: Buffer) => {
      this.outputAt = this.deps.now();
      for (const line of this.ring.push(chunk)) {
        this.readProgress(line);
        this.deps.line?.(this, line);
      }
    };
    child.stdout?.on('data', onOutput);
    child.stderr?.on('data', onOutput);
    this.exited = new Promise<ExitInfo>((resolve) => {
      child.once('error', (err) => {
        // Spawning failed (no such file): no exit event follows.
        if (child.pid === undefined) {
          this.deps.emit({ event: 'spawn_failed', key: this.key, message: err.message });
          const info = { code: null, signal: null, at: this.deps.now() };
          resolve(info);
          this.onExit(child, info);
        }
      });
      child.once('exit', (code, signal) => {
        const info = { code, signal, at: this.deps.now() };
        resolve(info);
        this.onExit(child, info);
      });
    });
    if (child.pid !== undefined) {
      this.deps.emit({ event: 'started', key: this.key, pid: child.pid });
      this.deps.started?.(this);
    }
  }

  /** Send `signal` to the process group. False when nothing runs. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.pid === null || this.child === null) return false;
    return killGroup(this.pid, signal);
  }

  /**
   * Stop and do not restart: the stop signal to the group, `grace`, SIGKILL to the group. Resolves
   * with how the process ended (null if none ran) once its exit event came and its group is empty.
   */
  async stop(): Promise<ExitInfo | null> {
    this.clearBackoff();
    const child = this.child;
    const exited = this.exited;
    const pgid = this.pid;
    if (child === null || exited === null || pgid === null) {
      if (this.state !== 'fatal') this.state = 'stopped';
      return null;
    }
    this.stopping = true;
    const mark = this.mark;
    const found = markedOutside(mark, pgid, readProcTable());
    const strays: Strays = new Map();
    noteStrays(strays, found);
    const alive = () => groupAlive(pgid) || stillAlive(strays, readProcTable()).length > 0;
    try {
      killGroup(pgid, this.program.stop.signal);
      signalEach(found, this.program.stop.signal);
      const deadline = this.deps.now() + this.program.stop.graceMs;
      const seen: { exit: ExitInfo | null } = { exit: null };
      void exited.then((e) => {
        seen.exit = e;
      });
      while (this.deps.now() < deadline && (seen.exit === null || alive())) await sleep(POLL_MS);
      if (seen.exit === null || alive()) {
        // Those that appeared during the grace too.
        noteStrays(strays, markedOutside(mark, pgid, readProcTable()));
        killGroup(pgid, 'SIGKILL');
        signalEach(stillAlive(strays, readProcTable()), 'SIGKILL');
        const info = await exited;
        const killDeadline = this.deps.now() + KILL_WAIT_MS;
        while (alive() && this.deps.now() < killDeadline) await sleep(POLL_MS);
        return info;
      }
      return seen.exit;
    } finally {
      this.stopping = false;
      this.state = 'stopped';
    }
  }

  /** For good: stop, and never start again (the supervisor is leaving). */
  shutdown(): Promise<ExitInfo | null> {
    this.closed = true;
    return this.stop();
  }

  /** Run `fn` after the commands queued before it for this instance have finished. */
  serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Stop, then start again at once: a deliberate restart (the budget is whole again). */
  async restart(): Promise<ExitInfo | null> {
    const exit = await this.stop();
    this.rules.reset();
    this.start();
    return exit;
  }

  private onExit(child: ChildProcess | null, info: ExitInfo): void {
    if (child !== null && child !== this.child) return;
    this.lastExit = info;
    const pid = this.pid ?? 0;
    this.child = null;
    this.pid = null;
    this.deps.emit({
      event: 'exited',
      key: this.key,
      pid,
      code: info.code,
      signal: info.signal,
      expected: this.stopping,
    });
    if (this.stopping) return;
    // Anything it left behind, in its group or marked, goes with it before the next start.
    if (pid > 0) {
      killGroup(pid, 'SIGKILL');
      signalEach(markedOutside(this.mark, pid, readProcTable()), 'SIGKILL');
    }
    const decision = this.rules.onExit(info.at, this.startedAt);
    if (decision.kind === 'fatal') {
      this.state = 'fatal';
      this.deps.emit({ event: 'fatal', key: this.key, restarts: this.restarts });
      return;
    }
    this.state = 'backoff';
    this.deps.emit({
      event: 'restart_scheduled',
      key: this.key,
      delayMs: decision.delayMs,
      restartsInWindow: decision.restartsInWindow,
    });
    this.backoff = setTimeout(() => {
      this.backoff = null;
      this.restarts++;
      this.start();
    }, decision.delayMs);
  }

  private readProgress(line: string): void {
    const re = this.program.progressRegex;
    if (re === null) return;
    const m = re.exec(line);
    if (m === null) return;
    const [, a, b] = m;
    if (a !== undefined && b !== undefined && Number(b) > 0) {
      this.progress = Math.min(1, Math.max(0, Number(a) / Number(b)));
    } else if (a !== undefined && Number.isFinite(Number(a))) {
      const v = Number(a);
      this.progress = Math.min(1, Math.max(0, v > 1 ? v / 100 : v));
    }
    this.phase = m[0].slice(0, 256);
  }

  private clearBackoff(): void {
    if (this.backoff !== null) clearTimeout(this.backoff);
    this.backoff = null;
  }
}

function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
