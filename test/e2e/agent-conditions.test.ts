/**
 * Issue 9, tests 4 and 9 end to end: a real process whose memory grows steadily is seen running away;
 * conditions live in the store — they survive a coordinator SIGKILL and restart, and two coordinators
 * receiving one agent's heartbeats record one condition, not two.
 */
import { fileURLToPath } from 'node:url';
import type { Agent } from '@rouse/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConditionRecord } from '../../packages/server/src/store/store.js';
import { type Cluster, startCluster } from '../harness/cluster.js';
import { startCoordinatorProcess } from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { type FreshSchema, freshSchema } from '../harness/postgres.js';
import { type Spawned, spawnNode } from '../harness/processes.js';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor } from '../harness/wait.js';

const AGENT = fileURLToPath(new URL('../fixtures/heartbeat-agent.mjs', import.meta.url));
const POLICY = `
policies:
  - name: e2e
    agent_type: e2e
    heartbeat: { expected_interval: 500ms, timeout_factor: 3 }
    stall_detection: { stall_threshold: 2s }
    resources: { rss_growth: 30MiB, rss_window: 8s }
`;

const policyFile = (): string => writePolicyFile(POLICY);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function agentProcess(env: Record<string, string>): Spawned {
  const p = spawnNode([AGENT], { AGENT_TYPE: 'e2e', ...env });
  cleanups.push(async () => {
    if (p.proc.exitCode === null && p.proc.signalCode === null) {
      p.kill('SIGKILL');
      await p.exited;
    }
  });
  return p;
}

async function registered(p: Spawned): Promise<string> {
  return (await p.waitForLine<{ event: string; agentId: string }>((m) => m.event === 'registered', 15_000))
    .agentId;
}

function api(url: string, token: string) {
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    agent: async (id: string) => (await get<{ agent: Agent }>(`/v1/agents/${id}`)).agent,
    conditions: async (id: string) =>
      (await get<{ conditions: ConditionRecord[] }>(`/v1/agents/${id}/conditions`)).conditions,
  };
}

describe('conditions end to end', () => {
  it('a real process whose memory grows steadily opens resource_runaway (rss_growth)', async () => {
    const coord = await startCoordinatorProcess({ extraArgs: ['--policies', policyFile()] });
    cleanups.push(() => coord.kill('SIGTERM'));
    const p = agentProcess({
      ROUSE_URL: coord.url,
      ROUSE_AGENT_TOKEN: coord.agentToken,
      LEAK_BYTES: String(2 * 1024 * 1024), // 2 MiB a beat: ~240 MiB a minute
    });
    const id = await registered(p);
    const c = api(coord.url, coord.adminToken);
    const agent = await waitFor(
      async () => {
        const a = await c.agent(id);
        return a.conditions.some((x) => x.condition === 'resource_runaway') ? a : null;
      },
      { what: 'resource_runaway on the leaking agent', timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(agent.status).toBe('at_risk');
    const runaway = agent.conditions.find((x) => x.condition === 'resource_runaway')!;
    expect(runaway.evidence).toMatchObject({ rule: 'rss_growth' });
    expect(Number(runaway.evidence.slopeBytesPerMin)).toBeGreaterThan(30 * 1024 * 1024);
  });

  it('conditions survive a coordinator SIGKILL and restart, without a second record', async () => {
    const dataDir = tempDir('rouse-coord-');
    const coord = await startCoordinatorProcess({ dataDir, extraArgs: ['--policies', policyFile()] });
    cleanups.push(() => coord.kill('SIGTERM'));
    const p = agentProcess({
      ROUSE_URL: coord.url,
      ROUSE_AGENT_TOKEN: coord.agentToken,
      REQUIRES: 'db',
      DEP_DOWN: 'db',
    });
    const id = await registered(p);
    const c = api(coord.url, coord.adminToken);
    const [before] = await waitFor(
      async () => {
        const list = await c.conditions(id);
        return list.length > 0 ? list : null;
      },
      { what: 'dependency_down', timeoutMs: 10_000 },
    );
    expect(before).toMatchObject({ condition: 'dependency_down', closedAt: null });
    await coord.kill('SIGKILL');
    await coord.restart();
    // The agent keeps heartbeating (it retries while the coordinator is away): still one condition.
    let beats = 0;
    await p.waitForLine<{ event: string }>((m) => m.event === 'beat' && ++beats >= 4, 15_000);
    const after = await c.conditions(id);
    expect(after).toEqual([before]);
    expect((await c.agent(id)).status).toBe('at_risk');
  });

  it('two coordinators receiving one agent’s heartbeats record one condition of each kind', async () => {
    const pg: FreshSchema = await freshSchema('conditions');
    cleanups.push(() => pg.drop());
    const cluster: Cluster = await startCluster(pg, { extraArgs: ['--policies', policyFile()] });
    cleanups.push(() => cluster.stop());
    const [c0, c1] = cluster.coordinators;
    const p = agentProcess({
      ROUSE_URL: c0!.url,
      BEAT_URLS: `${c0!.url},${c1!.url}`,
      ROUSE_AGENT_TOKEN: cluster.agentToken,
      REQUIRES: 'db',
      DEP_DOWN: 'db',
      PROGRESS: '0.5',
    });
    const id = await registered(p);
    const c = api(c1!.url, cluster.adminToken);
    await waitFor(
      async () => {
        const kinds = (await c.conditions(id)).map((x) => x.condition);
        return kinds.includes('dependency_down') && kinds.includes('progress_stalled');
      },
      { what: 'both conditions', timeoutMs: 15_000, intervalMs: 100 },
    );
    // Several more rounds through both coordinators (each re-evaluates on every heartbeat).
    let beats = 0;
    await p.waitForLine<{ event: string }>((m) => m.event === 'beat' && ++beats >= 8, 15_000);
    const all = await c.conditions(id);
    expect(all.map((x) => x.condition).sort()).toEqual(['dependency_down', 'progress_stalled']);
    expect(all.every((x) => x.closedAt === null)).toBe(true);
    expect(new Set(all.map((x) => x.openedBy)).size).toBeGreaterThanOrEqual(1);
  });
});
