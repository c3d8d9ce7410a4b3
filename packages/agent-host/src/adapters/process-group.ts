/**
 * One child process in a process group of its own, as the adapters run a CLI or a shell command:
 * spawned detached (its pid is the group's id), stdin from /dev/null unless input is given, stdout and
 * stderr read line by line. Signals go to the whole group — a tool's grandchild goes with it — or to
 * the leader only (an interrupt the CLI expects). `stop()` is signal → grace → SIGKILL to the group,
 * done once the leader's exit event came and no live process is left in the group. Descendants that
 * left the group for a session of their own (Codex runs its sandboxed commands so) are found by
 * parent pid when the stop begins and get the same signals.
 *
 * A descendant may leave the group: Claude Code starts every Bash command with `setsid`, in a session
 * and group of its own, so a signal to the group would miss it and it would outlive the CLI. Such
 * strays are noted while the leader lives (at every signal, and every `treeScanMs` — found by parent
 * pid, so they must be seen before the leader dies and they are reparented) and signalled with the
 * group, each through its own group.
 *
 * A parent-pid walk misses a descendant whose parent exited before the walk: adopted by init, it is no
 * longer anyone's descendant (Codex's sandbox is such a chain — when a link of it dies, the command
 * below runs on under init). So every process the group starts also inherits a marker
 * (process-marks.ts), and a stop also takes every process whose environment carries it, wherever it
 * now hangs in the tree — looking again once the group is empty, for a process may leave the group
 * after the stop began (Codex's sandbox enters a session of its own as it starts); the guard's
 * watcher looks for the same marker.
 *
 * How the leader ended comes from its `exit` event only (`exited`), never from `child.killed`, which
 * only says that `kill()` was called.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { type ProcStat, readProcTable, treeOf } from '../proc-stat.js';
import {
  groupAlive,
  markedEnv,
  markedOutside,
  newMark,
  noteStrays,
  type Strays,
  signalEach,
  stillAlive,
} from '../process-marks.js';
import type { GroupRegistry } from './group-guard.js';

export interface GroupExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (no such file, say); code and signal are null. */
  spawnError?: string;
}

export interface ProcessGroupOptions {
  /** The executable (looked up on PATH when it has no slash). */
  file: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the child. */
  env: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed. @default stdin is /dev/null */
  stdin?: string | Buffer;
  /** Each complete line of stdout (without the newline); a last line without one comes at the end. */
  onStdout?: (line: string) => void;
  onStderr?: (line: string) => void;
  /** Longer lines are cut into pieces of this many characters. @default 1 MiB */
  maxLineLength?: number;
  /** How often to look for descendants that left the group while the leader runs. @default 1000 */
  treeScanMs?: number;
  /**
   * Where the group is listed while it lives, so that it dies with this process even if this process
   * is SIGKILLed (group-guard.ts). @default none
   */
  guard?: GroupRegistry | null;
  /**
   * Told when a signal goes to processes outside the group (descendants that left it), each process
   * once: which, and the first signal it got. For the adapter's note; it must not throw.
   */
  onOutside?: (procs: readonly OutsideProcess[], signal: NodeJS.Signals) => void;
}

/** A process outside the group that a signal of the group's went to. */
export interface OutsideProcess {
  pid: number;
  /** Its command name (`/proc/<pid>/stat`), at most 15 characters. */
  comm: string;
}

export interface StopOptions {
  /** @default SIGTERM */
  signal?: NodeJS.Signals;
  /** How long the group has after `signal` before SIGKILL. @default 2000 */
  graceMs?: number;
}

const POLL_MS = 25;
/** How long to wait for the group to be empty after SIGKILL before giving up on it. */
const KILL_WAIT_MS = 5000;
const DEFAULT_MAX_LINE = 1 << 20;

export class ProcessGroup {
  /** The leader's pid (= the group id), or null when it could not be started. */
  readonly pid: number | null;
  /** Resolves once, with how the leader ended. */
  readonly exited: Promise<GroupExit>;
  /** How the leader ended, once it did. */
  exit: GroupExit | null = null;
  /** The signals this object sent (to the group or the leader), in order. */
  readonly sent: NodeJS.Signals[] = [];
  /** Descendants seen outside the group: pid → the group it was in. */
  private readonly strays: Strays = new Map();
  /** Strays already told to `onOutside`, as pid:group (a reused pid is another process). */
  private readonly told = new Set<string>();
  private readonly onOutside: ProcessGroupOptions['onOutside'];
  private guard: GroupRegistry | null = null;

  private constructor(
    child: ChildProcess | null,
    options: ProcessGroupOptions,
    /** The token this group's processes inherit (process-marks.ts). */
    private readonly mark: string,
    spawnError?: string,
  ) {
    this.onOutside = options.onOutside;
    if (child === null) {
      this.pid = null;
      this.exit = { code: null, signal: null, spawnError: spawnError ?? 'not started' };
      this.exited = Promise.resolve(this.exit);
      return;
    }
    this.pid = child.pid ?? null;
    this.guard = options.guard ?? null;
    if (this.pid !== null) this.guard?.watch(this.pid, mark);
    const scan = setInterval(() => this.noteStrays(readProcTable()), options.treeScanMs ?? 1000);
    scan.unref();
    const max = options.maxLineLength ?? DEFAULT_MAX_LINE;
    const out = lineReader(options.onStdout, max);
    const err = lineReader(options.onStderr, max);
    child.stdout?.on('data', out.push);
    child.stderr?.on('data', err.push);
    const closedOut = new Promise<void>((r) => (child.stdout ? child.stdout.once('close', r) : r()));
    const closedErr = new Promise<void>((r) => (child.stderr ? child.stderr.once('close', r) : r()));
    this.exited = new Promise<GroupExit>((resolve) => {
      const done = (info: GroupExit) => {
        clearInterval(scan);
        if (this.exit !== null) return;
        this.exit = info;
        resolve(info);
      };
      child.once('error', (e) => {
        // Spawning failed: no exit event follows.
        if (child.pid === undefined) {
          out.end();
          err.end();
          done({ code: null, signal: null, spawnError: e.message });
        }
      });
      child.once('exit', (code, signal) => {
        // The pipes may still hold output (or be held open by a grandchild): wait a little for them.
        const info = { code, signal };
        void Promise.race([Promise.all([closedOut, closedErr]), delay(200)]).then(() => {
          out.end();
          err.end();
          done(info);
        });
      });
    });
    if (options.stdin !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined); // a child that exits without reading its input
      child.stdin.end(options.stdin);
    }
  }

  /** Start `options.file` in a new process group. Never throws: a failed start resolves `exited` with `spawnError`. */
  static spawn(options: ProcessGroupOptions): ProcessGroup {
    const mark = newMark();
    try {
      const child = spawn(options.file, [...options.args], {
        cwd: options.cwd,
        env: markedEnv(options.env, mark),
        detached: true,
        stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      return new ProcessGroup(child, options, mark);
    } catch (err) {
      // spawn throws synchronously for some bad arguments (a NUL in an argument, say)
      return new ProcessGroup(null, options, mark, (err as Error).message);
    }
  }

  /** True while the leader has not exited. */
  get running(): boolean {
    return this.pid !== null && this.exit === null;
  }

  /**
   * Send `signal` to every process of the group, and to the descendants that left it. False when there
   * is nothing to signal (left, or never started).
   */
  signal(signal: NodeJS.Signals): boolean {
    if (this.pid === null) return false;
    this.sent.push(signal);
    const table = readProcTable();
    this.noteStrays(table);
    this.noteMarked(table);
    let sent = false;
    try {
      process.kill(-this.pid, signal);
      sent = true;
    } catch {
      // the group is empty
    }
    return this.signalOutside(stillAlive(this.strays, table), signal) || sent;
  }

  /** Send `signal` to the leader only (an interrupt the CLI handles itself). */
  signalLeader(signal: NodeJS.Signals): boolean {
    if (this.pid === null || this.exit !== null) return false;
    this.sent.push(signal);
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * True while a live (not zombie) process is left in the group — the leader or anything it started —
   * or one of the descendants that left it.
   */
  groupAlive(): boolean {
    if (this.pid === null) return false;
    if (groupAlive(this.pid)) return true;
    return this.strays.size > 0 && stillAlive(this.strays, readProcTable()).length > 0;
  }

  /** Note the leader's descendants outside its group (found by parent pid, so while it lives). */
  private noteStrays(table: readonly ProcStat[]): void {
    if (this.pid === null) return;
    for (const p of treeOf(this.pid, table)) {
      if (p.pgrp !== this.pid && p.state !== 'Z') this.strays.set(p.pid, p.pgrp);
    }
  }

  /**
   * Note the processes outside the group that carry its marker: descendants however far they moved in
   * the tree. Returns those not noted before, or noted in another group (they moved). Reads every
   * process's environment, so only when the group is signalled or stopped.
   */
  private noteMarked(table: readonly ProcStat[]): ProcStat[] {
    if (this.pid === null) return [];
    const fresh = markedOutside(this.mark, this.pid, table).filter((p) => this.strays.get(p.pid) !== p.pgrp);
    noteStrays(this.strays, fresh);
    return fresh;
  }

  /**
   * Note and send `signal` to the marked processes outside the group that the earlier looks did not
   * see (noteMarked). True if there were any. Once the group looks empty, not on every poll.
   */
  private sweepMarked(signal: NodeJS.Signals): boolean {
    const fresh = this.noteMarked(readProcTable());
    if (fresh.length === 0) return false;
    this.signalOutside(fresh, signal);
    return true;
  }

  /** Send `signal` to processes outside the group (signalEach), telling `onOutside` of the new ones. */
  private signalOutside(procs: readonly ProcStat[], signal: NodeJS.Signals): boolean {
    const sent = signalEach(procs, signal);
    if (this.onOutside === undefined) return sent;
    const fresh = procs.filter((p) => !this.told.has(`${p.pid}:${p.pgrp}`));
    if (fresh.length === 0) return sent;
    for (const p of fresh) this.told.add(`${p.pid}:${p.pgrp}`);
    try {
      this.onOutside(
        fresh.map((p) => ({ pid: p.pid, comm: p.comm })),
        signal,
      );
    } catch {
      // a note that failed must not stop the stop
    }
    return sent;
  }

  /**
   * `signal` to the group, up to `graceMs` for the leader to exit and the group to empty, then SIGKILL
   * to the group. Resolves with how the leader ended, once the group is empty (or after a bounded wait
   * for processes that SIGKILL did not end yet).
   */
  async stop(options: StopOptions = {}): Promise<GroupExit> {
    const graceMs = options.graceMs ?? 2000;
    if (this.pid === null) return this.exited;
    // A leader that is gone may have left marked processes no parent-pid walk could find.
    if (this.exit !== null) this.noteMarked(readProcTable());
    const signal = options.signal ?? 'SIGTERM';
    // The group counts as empty only once a last look for marked processes finds no new one: a
    // process may leave the group after the first look (a sandbox entering a session of its own, a
    // child started by a signal handler), and the group's emptiness says nothing about it.
    if (this.exit === null || this.groupAlive()) {
      if (graceMs > 0) this.signal(signal);
      // Real processes take real time to exit: the deadlines are monotonic (a wall-clock step must
      // not stretch or cut the grace), not a clock a test could move.
      const deadline = performance.now() + graceMs;
      while (
        performance.now() < deadline &&
        (this.exit === null || this.groupAlive() || this.sweepMarked(signal))
      )
        await delay(POLL_MS);
      if (this.exit === null || this.groupAlive()) this.signal('SIGKILL');
    }
    const info = await this.exited;
    const killDeadline = performance.now() + KILL_WAIT_MS;
    while ((this.groupAlive() || this.sweepMarked('SIGKILL')) && performance.now() < killDeadline)
      await delay(POLL_MS);
    if (!this.groupAlive()) {
      this.guard?.unwatch(this.pid);
      this.guard = null;
    }
    return info;
  }

  /** SIGKILL whatever the leader left behind in its group (after its exit); a no-op when nothing is left. */
  killRemainder(): void {
    if (this.pid === null) return;
    this.noteMarked(readProcTable());
    if (this.groupAlive()) this.signal('SIGKILL');
  }
}

/** Processes named in one note; the rest are counted. */
const NOTE_MAX_NAMED = 10;

/**
 * The adapter's note for {@link ProcessGroupOptions.onOutside}: `SIGTERM also went to 2 processes
 * outside the CLI's process group: 4242 (bwrap), 4243 (bash)`. `owner` names the group's leader.
 */
export function outsideNote(procs: readonly OutsideProcess[], signal: NodeJS.Signals, owner: string): string {
  const named = procs.slice(0, NOTE_MAX_NAMED).map((p) => `${p.pid} (${p.comm})`);
  if (procs.length > NOTE_MAX_NAMED) named.push(`${procs.length - NOTE_MAX_NAMED} more`);
  const n = procs.length === 1 ? '1 process' : `${procs.length} processes`;
  return `${signal} also went to ${n} outside the ${owner}'s process group: ${named.join(', ')}`;
}

/** Split chunks into lines for `onLine`; `end()` flushes a last line without a newline. */
function lineReader(
  onLine: ((line: string) => void) | undefined,
  max: number,
): { push: (chunk: Buffer) => void; end: () => void } {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  const emit = (line: string) => {
    if (!onLine) return;
    for (let i = 0; i < line.length || i === 0; i += max) onLine(line.slice(i, i + max));
  };
  return {
    push: (chunk) => {
      rest += decoder.write(chunk);
      let nl = rest.indexOf('\n');
      while (nl !== -1) {
        emit(rest.slice(0, nl).replace(/\r$/, ''));
        rest = rest.slice(nl + 1);
        nl = rest.indexOf('\n');
      }
      if (rest.length > max) {
        emit(rest.slice(0, max));
        rest = rest.slice(max);
      }
    },
    end: () => {
      rest += decoder.end();
      if (rest.length > 0) emit(rest);
      rest = '';
    },
  };
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
