/**
 * Issue 9, test 1: a SIGKILLed agent process is `lost` within its heartbeat timeout + 250 ms of its
 * last heartbeat — on SQLite, and on PostgreSQL with two coordinators where the one that received its
 * heartbeats is SIGKILLed too (the owner of the agent's lease shard detects it). Real processes, real
 * signals; the agent speaks the protocol with fetch (test/fixtures/heartbeat-agent.mjs).
 */
import { fileURLToPath } from 'node:url';
import type { Agent } from '@rouse/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { shardOf } from '../../packages/server/src/store/lease-shards.js';
import { type Cluster, observerStore, startCluster } from '../harness/cluster.js';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { type FreshSchema, freshSchema } from '../harness/postgres.js';
import { type Spawned, spawnNode } from '../harness/processes.js';
import { waitFor } from '../harness/wait.js';

const AGENT = fileURLToPath(new URL('../fixtures/heartbeat-agent.mjs', import.meta.url));
const TIMEOUT_MS = 1500;
const POLICY = `
policies:
  - name: e2e
    agent_type: e2e
    heartbeat: { expected_interval: 500ms, timeout_factor: 3 }
`;

const policyFile = (): string => writePolicyFile(POLICY);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function startAgent(url: string, token: string, beatUrl = url): Spawned {
  return spawnNode([AGENT], {
    ROUSE_URL: url,
    BEAT_URLS: beatUrl,
    ROUSE_AGENT_TOKEN: token,
    AGENT_TYPE: 'e2e',
  });
}

async function getAgent(url: string, adminToken: string, id: string): Promise<Agent> {
  const res = await fetch(`${url}/v1/agents/${id}`, { headers: { authorization: `Bearer ${adminToken}` } });
  return ((await res.json()) as { agent: Agent }).agent;
}

/** How long after its lease ran out the agent was found lost (ms, by the coordinators' clock). */
function excessOf(agent: Agent): number {
  const c = agent.conditions.find((x) => x.condition === 'heartbeat_timeout');
  expect(c, 'a heartbeat_timeout condition').toBeDefined();
  expect(c!.evidence.lastHeartbeatAt).toBe(agent.lastHeartbeatAt);
  return c!.since - (agent.lastHeartbeatAt! + TIMEOUT_MS);
}

describe('a SIGKILLed agent is lost within its timeout + 250 ms', () => {
  it('on SQLite', async () => {
    const coord: CoordinatorProcess = await startCoordinatorProcess({
      extraArgs: ['--policies', policyFile()],
    });
    cleanups.push(() => coord.kill('SIGTERM'));
    const excess: number[] = [];
    for (let run = 0; run < 3; run++) {
      const agentProc = startAgent(coord.url, coord.agentToken);
      const reg = await agentProc.waitForLine<{ event: string; agentId: string }>(
        (m) => m.event === 'registered',
      );
      let beats = 0;
      await agentProc.waitForLine<{ event: string }>((m) => m.event === 'beat' && ++beats >= 3, 10_000);
      agentProc.kill('SIGKILL');
      await agentProc.exited;
      const lost = await waitFor(
        async () => {
          const a = await getAgent(coord.url, coord.adminToken, reg.agentId);
          return a.status === 'lost' ? a : null;
        },
        { what: 'the agent to be lost', timeoutMs: 10_000, intervalMs: 20 },
      );
      excess.push(excessOf(lost));
    }
    for (const e of excess) {
      expect(e).toBeGreaterThanOrEqual(0);
      expect(e).toBeLessThanOrEqual(250);
    }
  });

  it('on PostgreSQL, when the coordinator that received its heartbeats is SIGKILLed too', async () => {
    const pg: FreshSchema = await freshSchema('liveness');
    cleanups.push(() => pg.drop());
    const cluster: Cluster = await startCluster(pg, { extraArgs: ['--policies', policyFile()] });
    cleanups.push(() => cluster.stop());
    const observer = await observerStore(pg);
    cleanups.push(() => observer.close());
    const [c0, c1] = cluster.coordinators as [CoordinatorProcess, CoordinatorProcess];
    // Wait until both hold shards, so that each agent's shard has an owner other than one of them.
    await waitFor(async () => new Set((await observer.listShardLeases()).map((l) => l.ownerId)).size === 2, {
      what: 'both coordinators to hold shards',
      timeoutMs: 15_000,
    });
    // An agent whose lease shard c0 owns, heartbeating through c1.
    let agentProc: Spawned | undefined;
    let agentId = '';
    for (let i = 0; i < 20 && agentId === ''; i++) {
      const p = startAgent(c1.url, cluster.agentToken);
      const reg = await p.waitForLine<{ event: string; agentId: string }>((m) => m.event === 'registered');
      const owner = (await observer.listShardLeases()).find((l) => l.shard === shardOf(reg.agentId))?.ownerId;
      if (owner === 'c0') {
        agentProc = p;
        agentId = reg.agentId;
      } else {
        p.kill('SIGKILL');
        await p.exited;
      }
    }
    expect(agentId, 'an agent in a shard of c0').not.toBe('');
    let beats = 0;
    await agentProc!.waitForLine<{ event: string }>((m) => m.event === 'beat' && ++beats >= 3, 10_000);
    agentProc!.kill('SIGKILL');
    await Promise.all([agentProc!.exited, c1.kill('SIGKILL')]);
    const lost = await waitFor(
      async () => {
        const a = await getAgent(c0.url, cluster.adminToken, agentId);
        return a.status === 'lost' ? a : null;
      },
      { what: 'c0 to find the agent lost', timeoutMs: 10_000, intervalMs: 20 },
    );
    const e = excessOf(lost);
    expect(e).toBeGreaterThanOrEqual(0);
    expect(e).toBeLessThanOrEqual(250);
  });
});
