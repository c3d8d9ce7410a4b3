/**
 * Process measurements from `/proc` (Linux). Elsewhere they return null and the report says so.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Peak resident set size (`VmHWM`) of a live process in bytes, or null if unavailable. */
export function peakRssBytes(pid: number): number | null {
  return readStatusKb(pid, 'VmHWM');
}

/** Current resident set size (`VmRSS`) of a live process in bytes, or null if unavailable. */
export function rssBytes(pid: number): number | null {
  return readStatusKb(pid, 'VmRSS');
}

function readStatusKb(pid: number, field: string): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

// Indexes into statFields(): ppid, user and system time, and that of the children waited for.
const PPID = 1;
const UTIME = 11;
const STIME = 12;
const CUTIME = 13;
const CSTIME = 14;

/**
 * `/proc/<pid>/stat` fields after the parenthesised command name, as numbers (the state letter is
 * NaN), or null when the process is gone.
 */
function statFields(pid: number | 'self'): number[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
  } catch {
    return null;
  }
}

/** Clock ticks to ms (USER_HZ is 100 on Linux); null unless finite. */
function ticksMs(ticks: number): number | null {
  return Number.isFinite(ticks) ? (ticks * 1000) / 100 : null;
}

/**
 * A live process's own CPU time and that of its children it has waited for (user + system, in ms),
 * or null when it is gone.
 */
export function cpuTimesMs(pid: number | 'self'): { ownMs: number; childrenMs: number } | null {
  const f = statFields(pid);
  if (f === null) return null;
  const own = ticksMs(f[UTIME]! + f[STIME]!);
  const children = ticksMs(f[CUTIME]! + f[CSTIME]!);
  return own === null || children === null ? null : { ownMs: own, childrenMs: children };
}

/** Total CPU time (user + system) a live process has used so far, in ms, or null. */
export function cpuTimeMs(pid: number): number | null {
  const f = statFields(pid);
  return f === null ? null : ticksMs(f[UTIME]! + f[STIME]!);
}

/**
 * CPU time of a server process and its children, in ms: the root's own time and that of the children
 * it has waited for, plus the time of its live direct children (PostgreSQL's postmaster, its backends
 * and background processes). Null when the root is gone or `/proc` is missing.
 */
export function serverTreeCpuMs(rootPid: number): number | null {
  const root = statFields(rootPid);
  if (root === null) return null;
  let ticks = root[UTIME]! + root[STIME]! + root[CUTIME]! + root[CSTIME]!;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(Number(name));
    if (f !== null && f[PPID] === rootPid) ticks += f[UTIME]! + f[STIME]!;
  }
  return ticksMs(ticks);
}

/**
 * How long a live process's main thread has been runnable but waiting for a CPU so far (the run
 * queue; `/proc/<pid>/schedstat`, second field), in ms, or null when it is gone or `/proc` is missing.
 * A server's latency includes this wait, which its own CPU time does not show.
 */
export function runQueueWaitMs(pid: number): number | null {
  try {
    const waitNs = Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ')[1]);
    return Number.isFinite(waitNs) ? waitNs / 1e6 : null;
  } catch {
    return null;
  }
}

/** Busy and total CPU time of the whole machine so far (`/proc/stat`), in ms summed over CPUs. */
export function machineCpuMs(): { busyMs: number; totalMs: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already inside user)
    const idle = (f[3] ?? 0) + (f[4] ?? 0);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busyMs: ((total - idle) * 1000) / 100, totalMs: (total * 1000) / 100 };
  } catch {
    return null;
  }
}

/** CPU time of this process plus its exited (waited-for) children, in ms. */
export function ownTreeCpuMs(): number | null {
  const f = statFields('self');
  return f === null ? null : ticksMs(f[UTIME]! + f[STIME]! + f[CUTIME]! + f[CSTIME]!);
}

/**
 * Starts measuring how busy the machine is with work that is not ours. Call the result once every
 * child process of the measured span has exited (their CPU time is counted only then).
 */
export function startNoiseMeter(serverCpuMs?: () => number | null): () => {
  otherProcessesCpuPercent: number;
  machineBusyPercent: number;
  /** The store's server (an embedded PostgreSQL), when it runs here: not counted as noise. */
  storeServerCpuPercent?: number;
} | null {
  const machineBefore = machineCpuMs();
  const ownBefore = ownTreeCpuMs();
  const serverBefore = serverCpuMs?.() ?? null;
  return () => {
    const machineAfter = machineCpuMs();
    const ownAfter = ownTreeCpuMs();
    const serverAfter = serverCpuMs?.() ?? null;
    if (!machineBefore || !machineAfter || ownBefore === null || ownAfter === null) return null;
    const total = machineAfter.totalMs - machineBefore.totalMs;
    if (total <= 0) return null;
    const busy = machineAfter.busyMs - machineBefore.busyMs;
    const server = serverBefore !== null && serverAfter !== null ? serverAfter - serverBefore : null;
    const others = Math.max(0, busy - (ownAfter - ownBefore) - (server ?? 0));
    const pct = (ms: number) => Math.round((1000 * ms) / total) / 10;
    return {
      otherProcessesCpuPercent: pct(others),
      machineBusyPercent: pct(busy),
      ...(server === null ? {} : { storeServerCpuPercent: pct(server) }),
    };
  };
}

/**
 * CPU time (ms) of the live descendants of `rootPid` whose command name matches `name` (the
 * headless browsers this process launched, say), with that of the children they have waited for, or
 * null without `/proc`. A descendant that exits between two readings (a closed page's renderer) moves
 * its time into its parent's, so the difference between readings counts it and never goes negative.
 */
export function descendantsCpuMs(rootPid: number, name: RegExp): number | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const procs: { pid: number; ppid: number; comm: string; ticks: number }[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .map(Number);
      procs.push({
        pid: Number(entry),
        ppid: f[PPID]!,
        comm,
        ticks: f[UTIME]! + f[STIME]! + f[CUTIME]! + f[CSTIME]!,
      });
    } catch {
      // gone meanwhile
    }
  }
  const inTree = new Set([rootPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs)
      if (!inTree.has(p.pid) && inTree.has(p.ppid)) {
        inTree.add(p.pid);
        grew = true;
      }
  }
  let ticks = 0;
  for (const p of procs) if (p.pid !== rootPid && inTree.has(p.pid) && name.test(p.comm)) ticks += p.ticks;
  return ticksMs(ticks);
}
