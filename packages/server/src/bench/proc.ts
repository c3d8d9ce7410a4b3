/**
 * Process measurements from `/proc` (Linux). Elsewhere they return null and the report says so.
 */
import { readFileSync } from 'node:fs';

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

/** Total CPU time (user + system) a live process has used so far, in ms, or null. */
export function cpuTimeMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15 (1-based).
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(rest[11]);
    const stime = Number(rest[12]);
    if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
    return ((utime + stime) * 1000) / 100; // USER_HZ is 100 on Linux
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
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime stime cutime cstime: fields 14-17 (1-based), i.e. rest[11..14]
    const ticks = Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14]);
    return Number.isFinite(ticks) ? (ticks * 1000) / 100 : null;
  } catch {
    return null;
  }
}

/**
 * Starts measuring how busy the machine is with work that is not ours. Call the result once every
 * child process of the measured span has exited (their CPU time is counted only then).
 */
export function startNoiseMeter(): () => {
  otherProcessesCpuPercent: number;
  machineBusyPercent: number;
} | null {
  const machineBefore = machineCpuMs();
  const ownBefore = ownTreeCpuMs();
  return () => {
    const machineAfter = machineCpuMs();
    const ownAfter = ownTreeCpuMs();
    if (!machineBefore || !machineAfter || ownBefore === null || ownAfter === null) return null;
    const total = machineAfter.totalMs - machineBefore.totalMs;
    if (total <= 0) return null;
    const busy = machineAfter.busyMs - machineBefore.busyMs;
    const others = Math.max(0, busy - (ownAfter - ownBefore));
    return {
      otherProcessesCpuPercent: Math.round((1000 * others) / total) / 10,
      machineBusyPercent: Math.round((1000 * busy) / total) / 10,
    };
  };
}
