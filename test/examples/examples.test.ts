/**
 * The examples in examples/ run as they are: plain `node` child processes importing `@rouse/sdk`
 * (the built workspace package), against a coordinator over real HTTP, for a bounded time.
 *
 * The coordinator here is the SDK's fake (packages/sdk/src/test-support/fake-coordinator.ts): it
 * speaks the agent routes the examples use and records every request, so the test can assert what
 * the agents sent. (To run them against a real `rouse serve`, see the comment at `backend` below.)
 */
import { fileURLToPath } from 'node:url';
import type { AgentHeartbeatRequest } from '@rouse/protocol';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  type FakeCoordinator,
  startFakeCoordinator,
} from '../../packages/sdk/src/test-support/fake-coordinator.js';
import { type Spawned, spawnNode } from '../harness/processes.js';

const example = (name: string): string => fileURLToPath(new URL(`../../examples/${name}`, import.meta.url));

interface Line {
  event: string;
  [key: string]: unknown;
}

/** A fake coordinator for one test, closed when it ends. */
async function backend(): Promise<FakeCoordinator> {
  // With a real coordinator instead: `const coord = await startCoordinatorProcess()` (test/harness),
  // pass ROUSE_URL=coord.url and ROUSE_AGENT_TOKEN=coord.agentToken to the examples, create tasks with
  // `new Client({ url: coord.url, token: coord.adminToken })`, and read the outcome back through the
  // same client (getTask, getAgent) instead of the fake's records.
  const fake = await startFakeCoordinator();
  fake.heartbeatIntervalMs = 100;
  onTestFinished(() => fake.close());
  return fake;
}

function run(file: string, fake: FakeCoordinator, args: string[] = []): Spawned {
  const child = spawnNode([example(file), ...args], {
    ROUSE_URL: fake.url,
    ROUSE_AGENT_TOKEN: 'enroll-token',
  });
  onTestFinished(async () => {
    if (child.proc.exitCode === null && child.proc.signalCode === null) {
      child.kill('SIGKILL');
      await child.exited;
    }
  });
  return child;
}

const line =
  (event: string) =>
  (m: unknown): boolean =>
    typeof m === 'object' && m !== null && (m as Line).event === event;

describe('examples/', () => {
  it('worker.mjs: summarizes tasks with progress, checkpoints, logs and a dependency report, then exits', async () => {
    const fake = await backend();
    const text = 'Rouse keeps long-running agent work alive: leases, heartbeats, retries and a watchdog.';
    const a = fake.addTask({ type: 'summarize', payload: { text, chunkSize: 30 } });
    const b = fake.addTask({ type: 'summarize', payload: { text: 'short text' } });
    const child = run('worker.mjs', fake, ['--max-tasks', '2']);
    const { code } = await child.exited;
    expect(code, child.errLines.join('\n')).toBe(0);

    expect(fake.registrations[0]).toMatchObject({
      agentType: 'example-worker',
      taskTypes: ['summarize'],
      requires: ['summarizer'],
    });
    expect(fake.completed.get(a.id)?.result).toMatchObject({ chunks: 3 });
    expect(fake.completed.get(b.id)?.result).toEqual({ summary: 'short text', chunks: 1 });
    const checkpoints = fake.requests.filter((r) => r.path === `/v1/tasks/${a.id}/checkpoint`);
    expect(checkpoints.map((r) => (r.body as { state: { done: number } }).state.done)).toEqual([1, 2, 3]);
    expect(fake.logs.filter((l) => l.taskId === a.id).flatMap((l) => l.lines.map((x) => x.text))).toEqual([
      'chunk 1/3',
      'chunk 2/3',
      'chunk 3/3',
    ]);
    expect(fake.taskProgress.get(a.id)).toEqual({ progress: 1, phase: 'chunk 3/3' });
    const deps = fake.agentBeats().flatMap((x) => x.dependencies ?? []);
    expect(deps).toContainEqual({ name: 'summarizer', state: 'up' });
    expect(fake.left).toEqual(['agt_1']);
    const events = child.lines.map((l) => (JSON.parse(l) as Line).event);
    expect(events.filter((e) => e === 'completed')).toHaveLength(2);
    expect(events.at(-1)).toBe('stopped');
  });

  it('worker.mjs: SIGTERM stops it cleanly (it leaves, exit code 0)', async () => {
    const fake = await backend();
    const child = run('worker.mjs', fake);
    await child.waitForLine(line('registered'));
    await fake.waitUntil(() => fake.agentBeats().length > 0);
    child.kill('SIGTERM');
    const { code } = await child.exited;
    expect(code, child.errLines.join('\n')).toBe(0);
    expect(fake.left).toEqual(['agt_1']);
  });

  it('monitor.mjs: iterations, progress in metadata, a wake acted on at a safe point, then it leaves', async () => {
    const fake = await backend();
    const child = run('monitor.mjs', fake, ['--iterations', '10', '--pause-ms', '150']);
    await child.waitForLine(line('registered'));
    await child.waitForLine((m) => line('iteration')(m) && (m as Line).pass === 2);
    fake.commands.push({ type: 'wake', reason: 'progress stalled' });
    await child.waitForLine(line('reconnected inbox'));
    const { code } = await child.exited;
    expect(code, child.errLines.join('\n')).toBe(0);

    expect(fake.registrations[0]).toMatchObject({ agentType: 'example-monitor', requires: ['mailbox'] });
    expect(child.lines.map((l) => JSON.parse(l) as Line)).toContainEqual({
      event: 'woken',
      reason: 'progress stalled',
    });
    const beats = fake.agentBeats();
    const last = beats.at(-1) as AgentHeartbeatRequest;
    expect(last).toMatchObject({
      status: 'running',
      progress: 1,
      metadata: { items_done: 20, items_total: 20, iterations: 10 },
    });
    expect(beats.some((x) => (x.metrics?.iterationMs ?? -1) >= 0)).toBe(true);
    expect(beats.flatMap((x) => x.dependencies ?? [])).toContainEqual({ name: 'mailbox', state: 'up' });
    expect(fake.left).toEqual(['agt_1']);
  });

  it('monitor.mjs: SIGTERM ends the loop and it leaves (exit code 0)', async () => {
    const fake = await backend();
    const child = run('monitor.mjs', fake, ['--pause-ms', '50']);
    await child.waitForLine((m) => line('iteration')(m) && (m as Line).pass === 2);
    child.kill('SIGTERM');
    const { code } = await child.exited;
    expect(code, child.errLines.join('\n')).toBe(0);
    expect(child.lines.map((l) => (JSON.parse(l) as Line).event).at(-1)).toBe('stopped');
    expect(fake.left).toEqual(['agt_1']);
  });
});
