/**
 * Issue 10, test 2: a wake that cures. A real SDK monitor process gets stuck (its loop runs, its
 * progress does not move); the recovery ladder's `wake` reaches it on its heartbeat, its next safe
 * point sees it and it moves again: the intervention is `succeeded`, and the rung below it (a restart)
 * never runs — the same process, the same incarnation.
 */
import { fileURLToPath } from 'node:url';
import type { Agent, Intervention } from '@rouse/protocol';
import { Client } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { type Spawned, spawnNode } from '../harness/processes.js';
import { waitFor } from '../harness/wait.js';

const MONITOR = fileURLToPath(new URL('../fixtures/stalling-monitor.mjs', import.meta.url));
const POLICY = `
policies:
  - name: e2e
    agent_type: e2e
    heartbeat: { expected_interval: 200ms, timeout_factor: 5 }
    stall_detection: { enabled: true, stall_threshold: 1s }
    recovery_actions:
      - action: wake
        on_condition: stall_detected
        timeout: 5s
      - action: snapshot_and_restart
        on_condition: stall_detected
`;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a wake that cures', () => {
  it('the stuck SDK agent moves again at its safe point; the wake succeeded and nothing was restarted', async () => {
    const coord: CoordinatorProcess = await startCoordinatorProcess({
      extraArgs: ['--policies', writePolicyFile(POLICY)],
    });
    cleanups.push(() => coord.kill('SIGTERM'));
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const agentProc: Spawned = spawnNode([MONITOR], {
      ROUSE_URL: coord.url,
      ROUSE_AGENT_TOKEN: coord.agentToken,
      STUCK_AT: '3',
    });
    cleanups.push(async () => {
      agentProc.kill('SIGKILL');
      await agentProc.exited;
    });
    const { agentId } = await agentProc.waitForLine<{ event: string; agentId: string }>(
      (m) => m.event === 'registered',
    );
    await agentProc.waitForLine<{ event: string }>((m) => m.event === 'stuck');
    const stalled = await waitFor(
      async () => {
        const a: Agent = await admin.getAgent(agentId);
        return a.status === 'stalled' ? a : null;
      },
      { what: 'the agent to be stalled', timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(stalled.conditions.map((c) => c.condition)).toEqual(['progress_stalled']);
    const woken = await agentProc.waitForLine<{ event: string; reason: string }>(
      (m) => m.event === 'wake',
      10_000,
    );
    expect(woken.reason).toMatch(/^recovery ladder: progress_stalled: rung 1 \(wake\)/);
    await agentProc.waitForLine<{ event: string }>((m) => m.event === 'unstuck');
    await agentProc.waitForLine<{ event: string; step: number }>((m) => m.event === 'step' && m.step >= 10);
    const done = await waitFor(
      async () => {
        const [latest] = (await admin.listInterventions({ agentId })).interventions as Intervention[];
        return latest?.state === 'succeeded' ? latest : null;
      },
      { what: 'the wake to succeed', timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(done).toMatchObject({
      condition: 'progress_stalled',
      action: 'wake',
      rung: 0,
      attempt: 1,
      reason: 'the condition closed after the wake',
      evidence: { wakeAck: { outcome: 'done' } },
    });
    // Nothing else ran, the agent is the same process and incarnation, and it is well.
    expect((await admin.listInterventions({ agentId })).interventions).toHaveLength(1);
    const after = await admin.getAgent(agentId);
    expect(after).toMatchObject({ incarnation: 1, pid: agentProc.proc.pid, conditions: [] });
    expect(['running', 'idle']).toContain(after.status);
    expect(agentProc.proc.exitCode).toBeNull();
  });
});
