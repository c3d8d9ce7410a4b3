/**
 * ProcessGroup and descendants that leave the group (as Claude Code's Bash tool does, with setsid):
 * they are signalled with the group, whether the group is stopped while the leader runs or after it
 * exited by itself — and so are those adopted by init before any parent-pid scan saw them (found by
 * the marker they inherited).
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { type ProcStat, parseProcStat } from '../proc-stat.js';
import { GROUP_MARK_ENV } from '../process-marks.js';
import { alive } from '../test-support/processes.js';
import { type OutsideProcess, outsideNote, ProcessGroup } from './process-group.js';

const groups: ProcessGroup[] = [];
const strays: number[] = [];
afterEach(async () => {
  for (const g of groups.splice(0)) await g.stop({ graceMs: 0 });
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
});

/** A leader that starts `sleep 60` in a session of its own, prints its pid, then waits `ms` and exits. */
function leader(ms: number) {
  const out: string[] = [];
  const script = `
    const c = require('node:child_process').spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    console.log(c.pid);
    setTimeout(() => process.exit(0), ${ms});`;
  const g = ProcessGroup.spawn({
    file: process.execPath,
    args: ['-e', script],
    cwd: tmpdir(),
    env: process.env,
    onStdout: (l) => out.push(l),
    treeScanMs: 50,
  });
  groups.push(g);
  return { g, out };
}

/**
 * A shell that starts `sleep 60` through an intermediate shell that exits at once (a double fork):
 * the sleep, in a session of its own, is init's child before the leader's first scan. The leader then
 * waits `ms` and exits. Scans are rare, so only the marker can find the sleep.
 */
function orphaningLeader(ms: number, env: NodeJS.ProcessEnv = process.env) {
  const out: string[] = [];
  const g = ProcessGroup.spawn({
    file: '/bin/sh',
    args: ['-c', `sh -c 'setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $!'; sleep ${ms / 1000}`],
    cwd: tmpdir(),
    env,
    onStdout: (l) => out.push(l),
    treeScanMs: 600_000,
  });
  groups.push(g);
  return { g, out };
}

function statOf(pid: number): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

function ppidOf(pid: number): number {
  const stat = statOf(pid);
  if (stat === null) throw new Error(`no process ${pid}`);
  return stat.ppid;
}

async function waitUntil(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(ok()).toBe(true);
}

async function strayPid(out: string[]): Promise<number> {
  for (let i = 0; i < 400 && out.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  const pid = Number(out[0]);
  strays.push(pid);
  return pid;
}

describe('ProcessGroup: descendants outside the group', () => {
  it('stop() while the leader runs kills a grandchild that left the group', async () => {
    const { g, out } = leader(60_000);
    const pid = await strayPid(out);
    expect(alive(pid)).toBe(true);
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).not.toContain(` ${g.pid} ${g.pid} `);
    await g.stop({ graceMs: 200 });
    expect(alive(pid)).toBe(false);
    expect(g.groupAlive()).toBe(false);
  });

  it('a grandchild left behind by a leader that exited by itself is still in the group’s reach', async () => {
    const { g, out } = leader(500);
    const pid = await strayPid(out);
    await g.exited;
    expect(alive(pid)).toBe(true); // reparented, in its own session
    expect(g.groupAlive()).toBe(true);
    await g.stop({ graceMs: 0 });
    expect(alive(pid)).toBe(false);
  });

  it('stop() kills a descendant that init adopted before any scan, by the marker it inherited', async () => {
    const { g, out } = orphaningLeader(60_000);
    const pid = await strayPid(out);
    expect(alive(pid)).toBe(true);
    expect(ppidOf(pid)).not.toBe(g.pid); // not the leader's child: its parent shell is gone
    expect(readFileSync(`/proc/${pid}/environ`, 'latin1')).toContain(`${GROUP_MARK_ENV}=`);
    await g.stop({ graceMs: 200 });
    expect(alive(pid)).toBe(false);
    expect(g.groupAlive()).toBe(false);
  });

  it('the stop after a leader exited by itself kills the adopted descendant too', async () => {
    const { g, out } = orphaningLeader(300);
    const pid = await strayPid(out);
    await g.exited;
    expect(alive(pid)).toBe(true);
    await g.stop({ graceMs: 0 });
    expect(alive(pid)).toBe(false);
  });

  it('stop() kills a descendant that left the group after the stop began (started by the leader on SIGTERM)', async () => {
    // The leader answers SIGTERM by starting a sleep in a session of its own, then exits: when the
    // group is empty, that sleep exists but no earlier look could have seen it.
    const out: string[] = [];
    const g = ProcessGroup.spawn({
      file: '/bin/sh',
      args: [
        '-c',
        `trap 'setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $!; exit 0' TERM; echo ready; while :; do sleep 0.05; done`,
      ],
      cwd: tmpdir(),
      env: process.env,
      onStdout: (l) => out.push(l),
      treeScanMs: 600_000,
    });
    groups.push(g);
    for (let i = 0; i < 400 && out.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(out).toEqual(['ready']);
    await g.stop({ graceMs: 2000 });
    const pid = Number(out[1]);
    strays.push(pid);
    expect(pid).toBeGreaterThan(1);
    expect(alive(pid)).toBe(false);
    expect(g.groupAlive()).toBe(false);
  });

  it('onOutside is told of each process outside the group once, with the first signal it got', async () => {
    // The stray ignores SIGTERM, so it gets SIGTERM and then SIGKILL: told once, with SIGTERM.
    const out: string[] = [];
    const told: { procs: OutsideProcess[]; signal: NodeJS.Signals }[] = [];
    const g = ProcessGroup.spawn({
      file: '/bin/sh',
      args: [
        '-c',
        `setsid sh -c "trap '' TERM; exec sleep 60" </dev/null >/dev/null 2>&1 & echo $!; sleep 60`,
      ],
      cwd: tmpdir(),
      env: process.env,
      onStdout: (l) => out.push(l),
      onOutside: (procs, signal) => told.push({ procs: [...procs], signal }),
      treeScanMs: 50,
    });
    groups.push(g);
    const pid = await strayPid(out);
    await waitUntil(() => statOf(pid)?.comm === 'sleep');
    await g.stop({ graceMs: 300 });
    expect(alive(pid)).toBe(false);
    expect(told).toEqual([{ procs: [{ pid, comm: 'sleep' }], signal: 'SIGTERM' }]);
    expect(outsideNote(told[0]!.procs, 'SIGTERM', 'CLI')).toBe(
      `SIGTERM also went to 1 process outside the CLI's process group: ${pid} (sleep)`,
    );
  });

  it('no process outside the group: onOutside is not called', async () => {
    const told: unknown[] = [];
    const g = ProcessGroup.spawn({
      file: '/bin/sh',
      args: ['-c', 'sleep 60 & wait'],
      cwd: tmpdir(),
      env: process.env,
      onOutside: (procs) => told.push(procs),
      treeScanMs: 50,
    });
    groups.push(g);
    await new Promise((r) => setTimeout(r, 200));
    await g.stop({ graceMs: 500 });
    expect(g.groupAlive()).toBe(false);
    expect(told).toEqual([]);
  });

  it('an inherited marker is kept and the group adds its own; a stop spares another group’s marked processes', async () => {
    const outer = orphaningLeader(60_000, { ...process.env, [GROUP_MARK_ENV]: 'outer-token' });
    const inner = orphaningLeader(60_000);
    const [outerPid, innerPid] = [await strayPid(outer.out), await strayPid(inner.out)];
    const words = (pid: number) =>
      readFileSync(`/proc/${pid}/environ`, 'latin1')
        .split('\0')
        .find((e) => e.startsWith(`${GROUP_MARK_ENV}=`))
        ?.slice(GROUP_MARK_ENV.length + 1)
        .split(' ');
    expect(words(outerPid)?.[0]).toBe('outer-token');
    expect(words(outerPid)).toHaveLength(2);
    await inner.g.stop({ graceMs: 0 });
    expect(alive(innerPid)).toBe(false);
    expect(alive(outerPid)).toBe(true); // another group's marker: not this stop's to kill
    await outer.g.stop({ graceMs: 0 });
    expect(alive(outerPid)).toBe(false);
  });
});

describe('outsideNote', () => {
  it('names up to ten processes and counts the rest', () => {
    const procs = Array.from({ length: 12 }, (_, i) => ({ pid: 100 + i, comm: i === 0 ? 'bwrap' : 'bash' }));
    expect(outsideNote(procs.slice(0, 2), 'SIGKILL', 'command')).toBe(
      "SIGKILL also went to 2 processes outside the command's process group: 100 (bwrap), 101 (bash)",
    );
    const many = outsideNote(procs, 'SIGTERM', 'CLI');
    expect(many).toMatch(
      /^SIGTERM also went to 12 processes outside the CLI's process group: 100 \(bwrap\), /,
    );
    expect(many).toMatch(/109 \(bash\), 2 more$/);
  });
});
