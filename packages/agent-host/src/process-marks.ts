/**
 * Reaching every process a started program led to. The agent host starts each program (a coding-agent
 * CLI, a shell command, a supervised agent) in a process group of its own and signals the group; but a
 * descendant may leave the group for a session of its own (`setsid`, a sandbox), and when a process
 * between it and the program exits, init adopts it: then neither the group nor a parent-pid walk from
 * the program reaches it any more.
 *
 * So every such program starts with a marker in its environment, which its descendants inherit
 * wherever they move in the tree: a random token in `ROUSE_PROCESS_GROUP` (space-separated, one token
 * per program it descends from, so a host started by another host adds its own). Stopping a program
 * also signals the processes outside its group that carry its token, each through its own group.
 * A process that clears its environment escapes the marker (the adapters also walk parent pids while
 * the program lives).
 */
import { randomBytes } from 'node:crypto';
import { environCarries, type ProcStat, readProcTable } from './proc-stat.js';

export const GROUP_MARK_ENV = 'ROUSE_PROCESS_GROUP';

/** A new program's token (96 random bits). */
export function newMark(): string {
  return randomBytes(12).toString('base64url');
}

/** `env` with `mark` added to the tokens it inherited. */
export function markedEnv(env: NodeJS.ProcessEnv, mark: string): NodeJS.ProcessEnv {
  const inherited = env[GROUP_MARK_ENV];
  return { ...env, [GROUP_MARK_ENV]: inherited ? `${inherited} ${mark}` : mark };
}

/**
 * The live processes outside group `pgid` that carry `mark` (never this process). Reads every
 * process's environment: for stops, not for polling.
 */
export function markedOutside(mark: string, pgid: number, table: readonly ProcStat[]): ProcStat[] {
  return table.filter(
    (p) =>
      p.pgrp !== pgid &&
      p.state !== 'Z' &&
      p.pid !== process.pid &&
      environCarries(p.pid, GROUP_MARK_ENV, mark),
  );
}

/** Noted processes outside a group: pid → the group it was in (a reused pid is in another group). */
export type Strays = Map<number, number>;

/** Note `procs` in `strays`. */
export function noteStrays(strays: Strays, procs: readonly ProcStat[]): void {
  for (const p of procs) strays.set(p.pid, p.pgrp);
}

/** The noted processes still alive: the same pid in the same group (not a reused pid), not a zombie. */
export function stillAlive(strays: Strays, table: readonly ProcStat[]): ProcStat[] {
  if (strays.size === 0) return [];
  return table.filter((p) => strays.get(p.pid) === p.pgrp && p.state !== 'Z');
}

let ownPgrp: number | undefined;
/** This process's own group: a process in it is signalled alone, never through the group. */
function ownGroup(): number {
  ownPgrp ??= readProcTable().find((p) => p.pid === process.pid)?.pgrp ?? process.pid;
  return ownPgrp;
}

/** Send `signal` to each of `procs` through its own group (alone if it shares ours). True if any was sent. */
export function signalEach(procs: readonly ProcStat[], signal: NodeJS.Signals): boolean {
  let sent = false;
  for (const p of procs) {
    try {
      process.kill(p.pgrp === ownGroup() ? p.pid : -p.pgrp, signal);
      sent = true;
    } catch {
      // gone meanwhile
    }
  }
  return sent;
}

/** Any live (not zombie) process in group `pgid`. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  // Zombies answer kill(0) until they are reaped (by init, which may not reap in a container).
  return readProcTable().some((p) => p.pgrp === pgid && p.state !== 'Z');
}
