/**
 * The process groups an adapter starts must not outlive the agent. The adapter stops them itself on
 * every path it lives through (a task's end, a timeout, a cancel, a shutdown), but a SIGKILLed or
 * crashed agent runs no code: the CLI's group (detached, so a terminal's Ctrl-C or a supervisor's
 * kill of the agent's own group does not reach it) would go on. Claude Code then runs to the end
 * of its turn, Codex until its next write.
 *
 * The guard ties their life to the agent's through a pipe: a tiny watcher process (one per agent,
 * started with the first group, in a session of its own) reads the agent's end of a pipe on which the
 * agent writes `+ <pgid> <start> [<mark>]` when a group starts and `- <pgid>` when it is gone. When
 * the pipe closes — the kernel closes it when the agent dies, however it dies — the watcher stops every
 * group still listed: SIGTERM to the group, to the leader's descendants that left it (found by parent
 * pid while the leader lives) and to every process whose environment carries the group's marker
 * (process-group.ts: found wherever init adopted it), 1 s, SIGKILL, then exits. A group whose leader pid now belongs to
 * another process (its start time differs) is left alone. On a clean exit the list is empty and the
 * watcher just exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The start time (clock ticks since boot, /proc/<pid>/stat field 22) of `pid`, or null. */
export function startTicks(pid: number): string | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return f[22 - 3] ?? null;
  } catch {
    return null;
  }
}

/** Where process groups are registered so that they die with the agent. */
export interface GroupRegistry {
  /** `mark`: the token the group's processes carry in their environment (process-group.ts). */
  watch(pgid: number, mark?: string): void;
  unwatch(pgid: number): void;
}

export class GroupGuard implements GroupRegistry {
  private child: ChildProcess | null = null;
  /** pgid → its mark ('' when none). */
  private readonly watched = new Map<number, string>();

  /** The watcher's pid while it runs (tests). */
  get watcherPid(): number | null {
    return this.child?.pid ?? null;
  }

  watch(pgid: number, mark = ''): void {
    const start = startTicks(pgid);
    if (start === null) return; // gone already
    this.watched.set(pgid, mark);
    this.send(`+ ${pgid} ${start}${mark === '' ? '' : ` ${mark}`}\n`);
  }

  unwatch(pgid: number): void {
    if (!this.watched.delete(pgid)) return;
    this.send(`- ${pgid}\n`);
  }

  /** End the watcher (the groups still listed are stopped, as when the agent dies). */
  close(): void {
    this.child?.stdin?.end();
    this.child = null;
  }

  private send(line: string): void {
    const child = this.child ?? this.start();
    if (child === null) return;
    child.stdin?.write(line);
  }

  private start(): ChildProcess | null {
    let child: ChildProcess;
    try {
      // (`__name`: a no-op for the helper some transpilers insert to keep function names)
      const code = `var __name = (f) => f; (${groupWatcherMain.toString()})(require);`;
      child = spawn(process.execPath, ['-e', code], {
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
        env: {},
      });
    } catch {
      return null;
    }
    this.child = child;
    child.on('error', () => {
      if (this.child === child) this.child = null;
    });
    child.on('exit', () => {
      // It died (killed by someone): a new one takes over the groups still running.
      if (this.child !== child) return;
      this.child = null;
      const left = [...this.watched];
      this.watched.clear();
      for (const [pgid, mark] of left) this.watch(pgid, mark);
    });
    child.stdin?.on('error', () => undefined);
    // Neither the watcher nor its pipe keeps the agent's event loop alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return child;
  }
}

let shared: GroupGuard | null = null;
/** The guard of this process (one watcher for every adapter in it). */
export function sharedGroupGuard(): GroupGuard {
  shared ??= new GroupGuard();
  return shared;
}

/**
 * The watcher (run as `node -e "(<this function>)(require)"`: self-contained, no imports). Reads
 * `+ pgid start [mark]` / `- pgid` lines; at the end of its input stops the groups still listed.
 */
export function groupWatcherMain(req: (id: string) => unknown): void {
  const fs = req('node:fs') as typeof import('node:fs');
  const watched = new Map<number, { start: string; mark: string }>();
  let rest = '';
  interface Proc {
    pid: number;
    ppid: number;
    pgrp: number;
    state: string;
    start: string;
  }
  const table = (): Proc[] => {
    const out: Proc[] = [];
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const text = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
        const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
        out.push({
          pid: Number(name),
          state: f[0] ?? '?',
          ppid: Number(f[1]),
          pgrp: Number(f[2]),
          start: f[19] ?? '',
        });
      } catch {
        // gone meanwhile
      }
    }
    return out;
  };
  /** True when `pid`'s environment holds `mark` among the words of ROUSE_PROCESS_GROUP. */
  const carries = (pid: number, mark: string): boolean => {
    let env: string;
    try {
      env = fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      return false;
    }
    const entry = env.split('\0').find((e) => e.startsWith('ROUSE_PROCESS_GROUP='));
    return (entry?.slice('ROUSE_PROCESS_GROUP='.length).split(' ') ?? []).includes(mark);
  };
  /**
   * The live processes of group `pgid`, the leader's descendants and the processes that carry the
   * group's mark — or [] if the pid is not ours.
   */
  const victims = (pgid: number, start: string, mark: string, procs: Proc[]): Proc[] => {
    const leader = procs.find((p) => p.pid === pgid);
    if (leader !== undefined && leader.start !== start) return [];
    const found = new Map<number, Proc>();
    for (const p of procs) {
      if (p.pgrp === pgid || (mark !== '' && p.state !== 'Z' && carries(p.pid, mark))) found.set(p.pid, p);
    }
    const queue = [...found.values()];
    for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
      for (const c of procs) {
        if (c.ppid === p.pid && !found.has(c.pid)) {
          found.set(c.pid, c);
          queue.push(c);
        }
      }
    }
    return [...found.values()].filter((p) => p.state !== 'Z');
  };
  const own = process.pid;
  const signalAll = (sig: NodeJS.Signals): number => {
    const procs = table();
    let n = 0;
    for (const [pgid, { start, mark }] of watched) {
      for (const p of victims(pgid, start, mark, procs)) {
        if (p.pid === own) continue;
        n++;
        try {
          process.kill(-p.pgrp, sig);
        } catch {
          try {
            process.kill(p.pid, sig);
          } catch {
            // gone
          }
        }
      }
    }
    return n;
  };
  const finish = () => {
    if (watched.size === 0 || signalAll('SIGTERM') === 0) process.exit(0);
    setTimeout(() => {
      signalAll('SIGKILL');
      process.exit(0);
    }, 1000);
  };
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    rest += chunk;
    for (let nl = rest.indexOf('\n'); nl !== -1; nl = rest.indexOf('\n')) {
      const [op, id, start, mark] = rest.slice(0, nl).split(' ');
      rest = rest.slice(nl + 1);
      const pgid = Number(id);
      if (!Number.isInteger(pgid) || pgid <= 1) continue;
      if (op === '+') watched.set(pgid, { start: start ?? '', mark: mark ?? '' });
      else if (op === '-') watched.delete(pgid);
    }
  });
  process.stdin.on('end', finish);
  process.stdin.on('error', finish);
}
