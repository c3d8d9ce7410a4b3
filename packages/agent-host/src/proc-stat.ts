/**
 * Reading a process tree's resources from Linux /proc (docs/design.md §6.6): every process's
 * `/proc/<pid>/stat` once per sample; a child's tree is its process group (the supervisor starts each
 * child in its own) plus anything descending from it by parent pid. RSS is the stat's resident pages
 * (the same figure as `statm`'s second field) × the page size; CPU % is the tree's user + system
 * ticks over the wall time between two samples. Parsing is pure; reading is `readProcTable`.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  pgrp: number;
  /** utime + stime, in clock ticks. */
  cpuTicks: number;
  rssPages: number;
}

/** One `/proc/<pid>/stat` line, or null if it is not one. The command name may hold spaces and parentheses. */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  // Fields after the name, numbered from 3 (state) as in proc(5).
  const f = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const field = (n: number) => Number(f[n - 3]);
  const stat: ProcStat = {
    pid,
    comm: text.slice(open + 1, close),
    state: f[0] ?? '?',
    ppid: field(4),
    pgrp: field(5),
    cpuTicks: field(14) + field(15),
    rssPages: field(24),
  };
  const numbers = [stat.pid, stat.ppid, stat.pgrp, stat.cpuTicks, stat.rssPages];
  return numbers.every(Number.isFinite) ? stat : null;
}

/** The processes of the tree rooted at `rootPid` (its process group, and its descendants). */
export function treeOf(rootPid: number, table: readonly ProcStat[]): ProcStat[] {
  const children = new Map<number, ProcStat[]>();
  for (const p of table) {
    const list = children.get(p.ppid);
    if (list === undefined) children.set(p.ppid, [p]);
    else list.push(p);
  }
  const found = new Map<number, ProcStat>();
  for (const p of table) if (p.pgrp === rootPid || p.pid === rootPid) found.set(p.pid, p);
  const queue = [...found.values()];
  for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
    for (const c of children.get(p.pid) ?? []) {
      if (!found.has(c.pid)) {
        found.set(c.pid, c);
        queue.push(c);
      }
    }
  }
  return [...found.values()];
}

/** Every process's stat now (processes that vanish while being read are skipped). */
export function readProcTable(procDir = '/proc'): ProcStat[] {
  const out: ProcStat[] = [];
  let entries: string[];
  try {
    entries = readdirSync(procDir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = parseProcStat(readFileSync(`${procDir}/${name}/stat`, 'utf8'));
      if (stat !== null) out.push(stat);
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

/**
 * True when the environment `pid` started with holds `name` with `token` among its space-separated
 * words (an inherited marker: it survives a double fork and a new session, which a parent-pid walk
 * does not). False when the environment cannot be read (another user's process, gone meanwhile).
 */
export function environCarries(pid: number, name: string, token: string, procDir = '/proc'): boolean {
  let env: string;
  try {
    env = readFileSync(`${procDir}/${pid}/environ`, 'latin1');
  } catch {
    return false;
  }
  const key = `${name}=`;
  for (let start = 0; start < env.length; ) {
    let end = env.indexOf('\0', start);
    if (end === -1) end = env.length;
    if (env.startsWith(key, start))
      return env
        .slice(start + key.length, end)
        .split(' ')
        .includes(token);
    start = end + 1;
  }
  return false;
}

function getconf(name: string, fallback: number): number {
  try {
    const v = Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim());
    return Number.isInteger(v) && v > 0 ? v : fallback;
  } catch {
    return fallback;
  }
}

/** A tree's resources at one sample. */
export interface TreeSample {
  rssBytes: number;
  /** null on the first sample of a tree (no interval to measure over yet). */
  cpuPercent: number | null;
  pids: number[];
}

/** Samples the trees of several roots, remembering each root's last CPU reading for the next. */
export class ProcSampler {
  private readonly last = new Map<number, { ticks: number; at: number }>();
  private readonly pageSize: number;
  private readonly ticksPerSecond: number;

  constructor(
    private readonly read: () => ProcStat[] = () => readProcTable(),
    system: { pageSize?: number; ticksPerSecond?: number } = {},
  ) {
    this.pageSize = system.pageSize ?? getconf('PAGESIZE', 4096);
    this.ticksPerSecond = system.ticksPerSecond ?? getconf('CLK_TCK', 100);
  }

  /** One reading of /proc for all `roots` at wall time `now` (ms). */
  sample(roots: readonly number[], now: number): Map<number, TreeSample> {
    const out = new Map<number, TreeSample>();
    if (roots.length === 0) return out;
    const table = this.read();
    for (const root of roots) {
      const tree = treeOf(root, table);
      const ticks = tree.reduce((s, p) => s + p.cpuTicks, 0);
      const prev = this.last.get(root);
      let cpuPercent: number | null = null;
      if (prev !== undefined && now > prev.at) {
        const seconds = Math.max(0, ticks - prev.ticks) / this.ticksPerSecond;
        cpuPercent = Math.round((seconds / ((now - prev.at) / 1000)) * 1000) / 10;
      }
      this.last.set(root, { ticks, at: now });
      out.set(root, {
        rssBytes: tree.reduce((s, p) => s + p.rssPages, 0) * this.pageSize,
        cpuPercent,
        pids: tree.map((p) => p.pid),
      });
    }
    for (const root of this.last.keys()) if (!roots.includes(root)) this.last.delete(root);
    return out;
  }
}
