/**
 * The group guard: a watcher process that stops the groups still listed when its pipe closes (the
 * agent died), leaves alone the ones that ended and a pid that now belongs to another process.
 * Real processes, real /proc.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupGuard, type GroupRegistry, groupWatcherMain, startTicks } from './group-guard.js';
import { ProcessGroup } from './process-group.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(what: string, pred: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A group: a shell with a child `sleep` in its group and one in a session of its own; their pids. */
async function sleepers(guard: GroupRegistry | null): Promise<{ group: ProcessGroup; pids: number[] }> {
  const lines: string[] = [];
  const group = ProcessGroup.spawn({
    file: '/bin/sh',
    args: ['-c', 'sleep 300 & echo $!; setsid sleep 301 & echo $!; echo $$; wait'],
    cwd: '/tmp',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    onStdout: (l) => lines.push(l),
    guard,
  });
  await until('three pids', () => lines.length >= 3);
  const pids = lines.map(Number);
  cleanups.push(() => {
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
  await until('the pids to run', () => pids.every(alive));
  return { group, pids };
}

describe('GroupGuard', () => {
  it('stops a listed group, the descendant that left it included, when its pipe closes', async () => {
    const guard = new GroupGuard();
    const { pids } = await sleepers(guard);
    expect(guard.watcherPid).not.toBeNull();
    const watcher = guard.watcherPid!;
    guard.close(); // what the kernel does to the pipe when the agent dies
    await until('the group and the stray to be gone', () => pids.every((p) => !alive(p)));
    await until('the watcher to exit', () => !alive(watcher));
  });

  it('stops a process init adopted from the group (found by the marker it inherited) when its pipe closes', async () => {
    const guard = new GroupGuard();
    const lines: string[] = [];
    const group = ProcessGroup.spawn({
      file: '/bin/sh',
      args: ['-c', `sh -c 'setsid sleep 302 </dev/null >/dev/null 2>&1 & echo $!'; sleep 300`],
      cwd: '/tmp',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      onStdout: (l) => lines.push(l),
      treeScanMs: 600_000,
      guard,
    });
    await until('the orphan’s pid', () => lines.length >= 1);
    const orphan = Number(lines[0]);
    cleanups.push(() => {
      for (const pid of [orphan, group.pid!]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    });
    await until('the orphan to run', () => alive(orphan));
    guard.close();
    await until('the group and the adopted process to be gone', () => !alive(orphan) && !alive(group.pid!));
  });

  it('leaves alone a group that ended and was unlisted', async () => {
    const listed: string[] = [];
    const recorder: GroupRegistry = {
      watch: (pgid) => listed.push(`+${pgid}`),
      unwatch: (pgid) => listed.push(`-${pgid}`),
    };
    const { group, pids } = await sleepers(recorder);
    expect(listed).toEqual([`+${group.pid}`]);
    await group.stop({ graceMs: 500 });
    expect(pids.every((p) => !alive(p))).toBe(true);
    expect(listed).toEqual([`+${group.pid}`, `-${group.pid}`]);
  });

  it('the watcher spares a pid whose start time is not the one listed (a reused pid) and a group taken off', async () => {
    const code = `var __name = (f) => f; (${groupWatcherMain.toString()})(require);`;
    const watcher = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'ignore', 'ignore'] });
    const a = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    const b = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    const c = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    cleanups.push(() => {
      for (const p of [a, b, c]) if (p.pid !== undefined && alive(p.pid)) process.kill(p.pid, 'SIGKILL');
    });
    await until('the sleeps to run', () => [a, b, c].every((p) => p.pid !== undefined && alive(p.pid)));
    watcher.stdin.write(`+ ${a.pid} ${startTicks(a.pid!)}\n`);
    watcher.stdin.write(`+ ${b.pid} 1\n`); // not its start time: someone else's process now
    watcher.stdin.write(`+ ${c.pid} ${startTicks(c.pid!)}\n- ${c.pid}\n`);
    watcher.stdin.end();
    await until('the watcher to exit', () => watcher.exitCode !== null || watcher.signalCode !== null);
    await until('the listed group to be gone', () => !alive(a.pid!));
    expect(alive(b.pid!)).toBe(true);
    expect(alive(c.pid!)).toBe(true);
  });
});
