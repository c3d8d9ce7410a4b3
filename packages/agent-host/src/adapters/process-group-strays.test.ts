/**
 * ProcessGroup and descendants that leave the group (as Claude Code's Bash tool does, with setsid):
 * they are signalled with the group, whether the group is stopped while the leader runs or after it
 * exited by itself.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { alive } from '../test-support/processes.js';
import { ProcessGroup } from './process-group.js';

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
});
