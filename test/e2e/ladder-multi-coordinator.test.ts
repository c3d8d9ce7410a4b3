/**
 * Issue 10, test 6: two `rouse serve` processes on one PostgreSQL schema and a stalled agent whose
 * heartbeats reach both. The owner of the agent's lease shard runs its recovery ladder: each rung's
 * attempt is one intervention over the whole history (no double action), and when that coordinator
 * is SIGKILLed mid-ladder the survivor takes the shard over and goes on from the next step — without
 * repeating the attempt already made.
 */
import { fileURLToPath } from 'node:url';
import type { Intervention } from '@rouse/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { shardOf } from '../../packages/server/src/store/lease-shards.js';
import { type Cluster, observerStore, startCluster } from '../harness/cluster.js';
import type { CoordinatorProcess } from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { type FreshSchema, freshSchema } from '../harness/postgres.js';
import { type Spawned, spawnNode } from '../harness/processes.js';
import { waitFor } from '../harness/wait.js';

const AGENT = fileURLToPath(new URL('../fixtures/heartbeat-agent.mjs', import.meta.url));
const POLICY = `
policies:
  - name: e2e
    agent_type: e2e
    heartbeat: { expected_interval: 300ms, timeout_factor: 5 }
    stall_detection: { enabled: true, stall_threshold: 1s }
    recovery_actions:
      - action: wake
        on_condition: stall_detected
        max_attempts: 3
        timeout: 2s
      - action: alert
        on_condition: recovery_failed
`;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function interventions(url: string, token: string, agentId: string): Promise<Intervention[]> {
  const res = await fetch(`${url}/v1/interventions?agentId=${agentId}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { interventions: Intervention[] }).interventions.slice().reverse();
}

describe('the recovery ladder with two coordinators', () => {
  it('one intervention per attempt while heartbeats reach both; the survivor goes on after the owner is SIGKILLed', async () => {
    const pg: FreshSchema = await freshSchema('ladder');
    cleanups.push(() => pg.drop());
    const cluster: Cluster = await startCluster(pg, { extraArgs: ['--policies', writePolicyFile(POLICY)] });
    cleanups.push(() => cluster.stop());
    const observer = await observerStore(pg);
    cleanups.push(() => observer.close());
    const [c0, c1] = cluster.coordinators as [CoordinatorProcess, CoordinatorProcess];
    await waitFor(async () => new Set((await observer.listShardLeases()).map((l) => l.ownerId)).size === 2, {
      what: 'both coordinators to hold shards',
      timeoutMs: 15_000,
    });
    // A stalled agent (its progress never moves) beating through both coordinators in turn.
    const agent: Spawned = spawnNode([AGENT], {
      ROUSE_URL: c0.url,
      BEAT_URLS: `${c0.url},${c1.url}`,
      ROUSE_AGENT_TOKEN: cluster.agentToken,
      AGENT_TYPE: 'e2e',
      PROGRESS: '0.25',
    });
    cleanups.push(async () => {
      agent.kill('SIGKILL');
      await agent.exited;
    });
    const { agentId } = await agent.waitForLine<{ event: string; agentId: string }>(
      (m) => m.event === 'registered',
    );
    const owner = (await observer.listShardLeases()).find((l) => l.shard === shardOf(agentId))?.ownerId;
    const [acting, survivor] = owner === 'c0' ? [c0, c1] : [c1, c0];

    // The first wake, by the shard owner.
    const first = await waitFor(
      async () => (await interventions(survivor.url, cluster.adminToken, agentId))[0] ?? null,
      { what: 'the first intervention', timeoutMs: 15_000, intervalMs: 50 },
    );
    expect(first).toMatchObject({ action: 'wake', attempt: 1, coordinatorId: owner, state: 'pending' });
    expect(first.shardEpoch).toEqual(expect.any(Number));

    // The owner dies mid-ladder; the survivor takes its shards and goes on.
    await acting.kill('SIGKILL');
    const done = await waitFor(
      async () => {
        const list = await interventions(survivor.url, cluster.adminToken, agentId);
        return list.some((i) => i.condition === 'recovery_failed') ? list : null;
      },
      { what: 'the ladder to run out', timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(done.map((i) => `${i.condition}/${i.action}#${i.attempt}`)).toEqual([
      'progress_stalled/wake#1',
      'progress_stalled/wake#2',
      'progress_stalled/wake#3',
      'recovery_failed/alert#1',
    ]);
    expect(done[0]?.coordinatorId).toBe(owner);
    // Every later step was the survivor's, at a newer epoch of the shard.
    for (const i of done.slice(1)) {
      expect(i.coordinatorId).toBe(survivor === c0 ? 'c0' : 'c1');
      expect(i.shardEpoch).toBeGreaterThan(first.shardEpoch!);
    }
    expect(done.slice(0, 3).map((i) => i.state)).toEqual(['failed', 'failed', 'failed']);
  });
});
