/**
 * The examples in examples/ run as they are: plain `node` child processes importing `@rouse/sdk`
 * (the built workspace package), against a real `rouse serve` over HTTP, for a bounded time. What
 * they did is read back through the coordinator's API: tasks, logs, checkpoints, the agents' state,
 * the dependencies they reported.
 */
import { fileURLToPath } from 'node:url';
import { Client, type DependencyState } from '@rouse/sdk';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { type Spawned, spawnNode } from '../harness/processes.js';
import { waitFor } from '../harness/wait.js';

const example = (name: string): string => fileURLToPath(new URL(`../../examples/${name}`, import.meta.url));

/** Fast heartbeats for the examples' agent types, so a test sees several in a second. */
const POLICY = `policies:
  - name: examples
    agent_type: example-worker
    heartbeat: { expected_interval: 200ms }
  - name: example-monitors
    agent_type: example-monitor
    heartbeat: { expected_interval: 200ms }
`;

interface Line {
  event: string;
  [key: string]: unknown;
}

interface Backend {
  coord: CoordinatorProcess;
  admin: Client;
}

/** A real coordinator for one test, stopped when it ends. */
async function backend(): Promise<Backend> {
  const file = writePolicyFile(POLICY);
  const coord = await startCoordinatorProcess({ extraArgs: ['--policies', file] });
  onTestFinished(() => coord.kill('SIGTERM'));
  return { coord, admin: new Client({ url: coord.url, token: coord.adminToken }) };
}

function run(file: string, b: Backend, args: string[] = []): Spawned {
  const child = spawnNode([example(file), ...args], {
    ROUSE_URL: b.coord.url,
    ROUSE_AGENT_TOKEN: b.coord.agentToken,
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

async function dependencyState(b: Backend, name: string): Promise<DependencyState | undefined> {
  const res = await fetch(`${b.coord.url}/v1/dependencies`, {
    headers: { authorization: `Bearer ${b.coord.adminToken}` },
  });
  const { dependencies } = (await res.json()) as { dependencies: { name: string; state: DependencyState }[] };
  return dependencies.find((d) => d.name === name)?.state;
}

describe('examples/ against a real coordinator', () => {
  it('worker.mjs: summarizes tasks with progress, checkpoints, logs and a dependency report, then exits', async () => {
    const b = await backend();
    const text = 'Rouse keeps long-running agent work alive: leases, heartbeats, retries and a watchdog.';
    const { task: a } = await b.admin.createTask({ type: 'summarize', payload: { text, chunkSize: 30 } });
    const { task: short } = await b.admin.createTask({ type: 'summarize', payload: { text: 'short text' } });
    const child = run('worker.mjs', b, ['--max-tasks', '2']);
    const { agentId } = await child.waitForLine<{ event: string; agentId: string }>(line('registered'));
    const { code } = await child.exited;
    expect(code, child.errLines.join('\n')).toBe(0);

    const doneA = await b.admin.getTask(a.id);
    expect(doneA).toMatchObject({
      status: 'completed',
      result: { chunks: 3 },
      progress: 1,
      phase: 'chunk 3/3',
      checkpoint: { done: 3 },
    });
    expect(await b.admin.getTask(short.id)).toMatchObject({
      status: 'completed',
      result: { summary: 'short text', chunks: 1 },
    });
    const logs = await b.admin.getLogs(a.id);
    expect(logs.lines.map((l) => l.text)).toEqual(['chunk 1/3', 'chunk 2/3', 'chunk 3/3']);
    const agent = await b.admin.getAgent(agentId);
    expect(agent).toMatchObject({
      agentType: 'example-worker',
      taskTypes: ['summarize'],
      requires: ['summarizer'],
      status: 'left',
    });
    expect(await dependencyState(b, 'summarizer')).toBe('up');
    const events = child.lines.map((l) => (JSON.parse(l) as Line).event);
    expect(events.filter((e) => e === 'completed')).toHaveLength(2);
    expect(events.at(-1)).toBe('stopped');
  });

  it('worker.mjs: SIGTERM stops it cleanly (it leaves, exit code 0)', async () => {
    const b = await backend();
    const child = run('worker.mjs', b);
    const { agentId } = await child.waitForLine<{ event: string; agentId: string }>(line('registered'));
    await waitFor(async () => (await b.admin.getAgent(agentId)).lastHeartbeatAt !== null, {
      what: 'a first heartbeat',
    });
    child.kill('SIGTERM');
    const { code } = await child.exited;
    expect(code, child.errLines.join('\n')).toBe(0);
    expect((await b.admin.getAgent(agentId)).status).toBe('left');
  });

  it('monitor.mjs: iterations, progress in metadata, a wake acted on at a safe point, then it leaves', async () => {
    const b = await backend();
    const child = run('monitor.mjs', b, ['--iterations', '10', '--pause-ms', '250']);
    const { agentId } = await child.waitForLine<{ event: string; agentId: string }>(line('registered'));
    await child.waitForLine((m) => line('iteration')(m) && (m as Line).pass === 2);
    await b.admin.sendCommand(agentId, { type: 'wake', reason: 'progress stalled' });
    await child.waitForLine(line('reconnected inbox'), 10_000);
    // Its last state, before it leaves.
    const seen = await waitFor(
      async () => {
        const a = await b.admin.getAgent(agentId);
        return a.metadata?.iterations === 10 ? a : null;
      },
      { what: 'the monitor to report all its iterations', timeoutMs: 15_000 },
    );
    expect(seen).toMatchObject({
      agentType: 'example-monitor',
      requires: ['mailbox'],
      metadata: { items_done: 20, items_total: 20, iterations: 10 },
    });
    const { code } = await child.exited;
    expect(code, child.errLines.join('\n')).toBe(0);
    expect(child.lines.map((l) => JSON.parse(l) as Line)).toContainEqual({
      event: 'woken',
      reason: 'progress stalled',
    });
    const after = await b.admin.getAgent(agentId);
    expect(after.status).toBe('left');
    expect(after.metrics?.iterationMs).toBeGreaterThanOrEqual(0);
    expect(await dependencyState(b, 'mailbox')).toBe('up');
  });

  it('monitor.mjs: SIGTERM ends the loop and it leaves (exit code 0)', async () => {
    const b = await backend();
    const child = run('monitor.mjs', b, ['--pause-ms', '50']);
    const { agentId } = await child.waitForLine<{ event: string; agentId: string }>(line('registered'));
    await child.waitForLine((m) => line('iteration')(m) && (m as Line).pass === 2);
    child.kill('SIGTERM');
    const { code } = await child.exited;
    expect(code, child.errLines.join('\n')).toBe(0);
    expect(child.lines.map((l) => (JSON.parse(l) as Line).event).at(-1)).toBe('stopped');
    expect((await b.admin.getAgent(agentId)).status).toBe('left');
  });
});
