/**
 * A supervised program's instance with real processes: a stop, and a restart after an exit of its
 * own, reach what the program started outside its group — here a `sleep` in a session of its own
 * whose parent shell exited at once, so that init adopted it and only the inherited marker finds it.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResolvedProgram } from './host-config.js';
import { type InstanceEvent, ProgramInstance } from './program-instance.js';
import { alive } from './test-support/processes.js';

const instances: ProgramInstance[] = [];
const pids: number[] = [];
afterEach(async () => {
  for (const i of instances.splice(0)) await i.shutdown();
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
});

/** Starts an orphaned `sleep 300` (its pid on a line), then runs `then` (a shell command). */
function program(then: string): ResolvedProgram {
  return {
    name: 'orphaner',
    command: ['/bin/sh', '-c', `sh -c 'setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!'; ${then}`],
    cwd: tmpdir(),
    env: {},
    instances: 1,
    agentType: 'orphaner',
    sdk: false,
    restart: { backoffMs: 60_000, maxBackoffMs: 60_000, resetAfterMs: 60_000, budget: 5, windowMs: 60_000 },
    stop: { signal: 'SIGTERM', graceMs: 300 },
    wakeSignal: null,
    progressRegex: null,
  };
}

function start(then: string): { instance: ProgramInstance; lines: string[]; events: InstanceEvent[] } {
  const lines: string[] = [];
  const events: InstanceEvent[] = [];
  const instance = new ProgramInstance(program(then), 1, 'test', {
    env: () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin' }),
    now: () => performance.now(),
    emit: (e) => events.push(e),
    line: (_i, line) => lines.push(line),
  });
  instances.push(instance);
  instance.start();
  return { instance, lines, events };
}

async function orphan(lines: string[]): Promise<number> {
  for (let i = 0; i < 400 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  const pid = Number(lines[0]);
  expect(Number.isInteger(pid) && pid > 0).toBe(true);
  pids.push(pid);
  return pid;
}

const parentOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};

describe('ProgramInstance: what the program started outside its group', () => {
  it('a stop kills an adopted descendant in a session of its own', async () => {
    const { instance, lines } = start('exec sleep 300');
    const pid = await orphan(lines);
    expect(alive(pid)).toBe(true);
    expect(parentOf(pid)).not.toBe(instance.pid);
    await instance.stop();
    expect(alive(pid)).toBe(false);
  });

  it('an exit of its own takes it down too, before the restart', async () => {
    const { lines, events } = start('sleep 0.5; exit 3');
    const pid = await orphan(lines);
    for (let i = 0; i < 200 && !events.some((e) => e.event === 'restart_scheduled'); i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(events.map((e) => e.event)).toContain('restart_scheduled');
    for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 25));
    expect(alive(pid)).toBe(false);
  });
});
