/**
 * Failover (several coordinators only): the extra detection delay when a coordinator dies together
 * with its agents. Two coordinators share the store and split the lease shards. Raw agents (heartbeat
 * every 500 ms, timeout 1,500 ms) hold one task each through the older one; then the agents and that
 * coordinator are SIGKILLed at once. Nobody has an exact timer for those leases any more: the ones in
 * the survivor's shards are swept when due, the others once the survivor takes the dead one's shards
 * when their lease lapses (shard lease TTL, renewed every third of it). We report, on the store's clock,
 * `timeout − last heartbeat − heartbeatTimeoutMs` — the delay beyond normal detection — per task, over
 * a few rounds (a fresh coordinator joins after each, and the survivor is the next round's owner).
 */
import type { CreateTaskResponse, TaskEvent, TaskResponse } from '@rouse/protocol';
import { type JsonChild, spawnJsonChild } from './child.js';
import { type CoordinatorProcess, startOne } from './coordinator-process.js';
import type { DetectionAgentConfig } from './detection-agent.js';
import { HttpClient } from './http-client.js';
import { round, roundSummary, summarize } from './stats.js';
import { sleep } from './tasks.js';
import type { Metric, WorkloadContext, WorkloadResult } from './workload.js';

const HEARTBEAT_INTERVAL_MS = 500;
const HEARTBEAT_TIMEOUT_MS = 1500;
/** The coordinators' default (`shardLeaseTtlMs`). */
const SHARD_LEASE_TTL_MS = 5000;
const AGENTS_PER_ROUND = 6;

export async function failover(ctx: WorkloadContext): Promise<WorkloadResult> {
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = {};
  const result: WorkloadResult = { workload: 'failover', store: ctx.store.name, metrics, details };
  if (!ctx.store.namespaceArgs) {
    details.skipped = 'needs a store several coordinators share (--store postgres or postgres-2)';
    ctx.log(`failover: skipped (${details.skipped})`);
    return result;
  }
  const rounds = ctx.quick ? 1 : 3;
  Object.assign(details, {
    rounds,
    agentsPerRound: AGENTS_PER_ROUND,
    heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
    shardLeaseTtlMs: SHARD_LEASE_TTL_MS,
  });
  const shared = {
    adminToken: `bench-admin-${Math.random().toString(36).slice(2)}`,
    agentToken: `bench-agent-${Math.random().toString(36).slice(2)}`,
    extraArgs: ctx.store.namespaceArgs(),
  };
  const start = () => startOne({ store: ctx.store }, shared);
  // Oldest first: the next one to die.
  const alive: CoordinatorProcess[] = [];
  const dead: CoordinatorProcess[] = [];
  const excess: number[] = [];
  const takeover: number[] = [];
  try {
    alive.push(await start());
    alive.push(await start());
    for (let r = 0; r < rounds; r++) {
      const owner = alive.shift()!;
      const survivor = alive[0]!;
      const http = new HttpClient({ url: owner.url, token: owner.adminToken, maxSockets: 4 });
      const agents: JsonChild[] = [];
      const tasks: { taskId: string; acked: number | null }[] = [];
      try {
        for (let i = 0; i < AGENTS_PER_ROUND; i++) {
          const type = `bench.failover.${r}.${i}`;
          const created = await http.post<CreateTaskResponse>('/v1/tasks', {
            type,
            payload: {},
            maxAttempts: 1,
            timing: { heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS },
          });
          const config: DetectionAgentConfig = {
            url: owner.url,
            token: shared.agentToken,
            taskType: type,
            heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
          };
          agents.push(spawnJsonChild('detection-agent', config));
          tasks.push({ taskId: created.task.id, acked: null });
        }
        await Promise.all(
          agents.map((a) => a.waitFor((m) => m.type === 'beat' && (m.n as number) >= 2, 30_000)),
        );
      } finally {
        http.close();
      }
      // The owner and every agent it served die at once.
      const killedAt = Date.now();
      for (const a of agents) a.kill('SIGKILL');
      await owner.kill();
      await Promise.all(agents.map((a) => a.exited));
      dead.push(owner);
      for (const [i, a] of agents.entries()) {
        const last = a.messages.filter((m) => m.type === 'beat' && m.ok === true).at(-1);
        if (typeof last?.leaseExpiresAt === 'number')
          tasks[i]!.acked = last.leaseExpiresAt - HEARTBEAT_TIMEOUT_MS;
      }
      ctx.log(
        `failover: round ${r + 1}: owner killed; waiting for the survivor to expire ${tasks.length} leases`,
      );
      const read = new HttpClient({ url: survivor.url, token: shared.adminToken, maxSockets: 4 });
      try {
        for (const t of tasks) {
          const deadline = Date.now() + SHARD_LEASE_TTL_MS * 3 + 15_000;
          let ev: TaskEvent | undefined;
          while (!ev) {
            if (Date.now() > deadline) throw new Error(`task ${t.taskId} was not expired by the survivor`);
            await sleep(50);
            ev = (await read.get<{ events: TaskEvent[] }>(`/v1/tasks/${t.taskId}/events`)).events.find(
              (e) => e.to === 'timeout',
            );
          }
          const { task } = await read.get<TaskResponse>(`/v1/tasks/${t.taskId}`);
          const lastBeat = Math.max(
            task.lastHeartbeatAt ?? -Infinity,
            t.acked ?? -Infinity,
            task.startedAt ?? -Infinity,
          );
          excess.push(ev.at - lastBeat - HEARTBEAT_TIMEOUT_MS);
          takeover.push(ev.at - killedAt);
        }
      } finally {
        read.close();
      }
      ctx.log(
        `failover: round ${r + 1}: extra delay ${round(Math.max(...excess.slice(-tasks.length)))} ms at most`,
      );
      // A fresh coordinator joins (the survivor hands it its share of the shards).
      alive.push(await start());
    }
  } finally {
    await Promise.all([...alive, ...dead].map((c) => c.stop()));
  }
  const s = summarize(excess);
  details.excessMs = roundSummary(s);
  details.killToTimeoutMs = roundSummary(summarize(takeover));
  metrics.push({
    workload: 'failover',
    metric: `shard owner dies: extra detection delay p50 (TTL ${SHARD_LEASE_TTL_MS} ms)`,
    value: s.p50,
    unit: 'ms',
  });
  metrics.push({
    workload: 'failover',
    metric: `shard owner dies: extra detection delay max (${excess.length} leases)`,
    value: s.max,
    unit: 'ms',
    target: { op: '<=', value: SHARD_LEASE_TTL_MS + Math.ceil(SHARD_LEASE_TTL_MS / 3) + 250 + 250 },
  });
  return result;
}
