/**
 * Agent heartbeats: how many heartbeats (`POST /v1/agents/{id}/heartbeat`, what every SDK worker sends
 * every 5 s) one coordinator absorbs, and what each costs it and the database. 500 registered agents,
 * each running 2 tasks; every heartbeat carries the agent's status and both tasks' beats (lease
 * renewals with a moving progress). 24 requests in flight, each the heartbeat of the next agent in
 * turn. The coordinator's CPU per heartbeat gives the fleet one core watches.
 */
import type { ClaimResponse, RegisterAgentResponse, TaskBeat } from '@rouse/protocol';
import { startCoordinator } from './coordinator-process.js';
import { HttpClient } from './http-client.js';
import { cpuTimeMs } from './proc.js';
import { monotonicUs, type ProfileWindow } from './profile-summary.js';
import { round, roundSummary, summarize } from './stats.js';
import { createBatched, runConcurrent } from './tasks.js';
import { attachProfile, type Metric, type WorkloadContext, type WorkloadResult } from './workload.js';

const AGENTS = 500;
const TASKS_PER_AGENT = 2;
const IN_FLIGHT = 24;
const TYPE = 'bench.heartbeats';
/** The heartbeat interval a fleet is sized for (the SDK's default). */
const INTERVAL_S = 5;

export async function heartbeats(ctx: WorkloadContext): Promise<WorkloadResult> {
  const total = ctx.quick ? 2000 : 12_000;
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = { agents: AGENTS, heartbeats: total, inFlight: IN_FLIGHT };
  const result: WorkloadResult = { workload: 'heartbeats', store: ctx.store.name, metrics, details };
  const windows: Record<string, ProfileWindow> = {};
  const coord = await startCoordinator({ store: ctx.store, cpuProfileDir: ctx.cpuProfileDir });
  const http = new HttpClient({ url: coord.url, token: coord.agentToken, maxSockets: IN_FLIGHT });
  const admin = new HttpClient({ url: coord.url, token: coord.adminToken, maxSockets: 2 });
  try {
    ctx.log(`heartbeats: ${AGENTS} agents, each running ${TASKS_PER_AGENT} tasks`);
    await createBatched(admin, AGENTS * TASKS_PER_AGENT, 1000, 2, () => ({
      type: TYPE,
      payload: {},
      timing: { heartbeatIntervalMs: 60_000 }, // no lease runs out while the bench sets up
    }));
    const agents: { path: string; token: string; tasks: TaskBeat[] }[] = [];
    await runConcurrent(AGENTS, 8, async (i) => {
      const reg = await http.post<RegisterAgentResponse>('/v1/agents', {
        agentType: 'bench-heartbeats',
        name: `bench-${i}`,
        taskTypes: [TYPE],
      });
      const claimed = await http.post<ClaimResponse>(
        `/v1/agents/${reg.agent.id}/claim`,
        { types: [TYPE], max: TASKS_PER_AGENT, waitMs: 0, start: true },
        { token: reg.token },
      );
      agents[i] = {
        path: `/v1/agents/${reg.agent.id}/heartbeat`,
        token: reg.token,
        tasks: claimed.tasks.map((t) => ({ taskId: t.id, version: t.version })),
      };
    });
    details.tasksHeld = agents.reduce((n, a) => n + a.tasks.length, 0);
    const beat = (i: number) => {
      const a = agents[i % AGENTS]!;
      const progress = (Math.floor(i / AGENTS) % 100) / 100;
      const tasks = a.tasks.map((t) => ({ ...t, progress }));
      return http.post(a.path, { status: 'running', tasks }, { token: a.token, parse: false });
    };
    await runConcurrent(AGENTS, IN_FLIGHT, async (i) => {
      await beat(i);
    }); // warm-up: every agent once

    ctx.log(`heartbeats: ${total} heartbeats, ${IN_FLIGHT} in flight`);
    const requestMs = new Float64Array(total);
    const coordBefore = cpuTimeMs(coord.pid);
    const serverBefore = ctx.store.serverCpuMs?.() ?? null;
    const fromUs = monotonicUs();
    const t = performance.now();
    await runConcurrent(total, IN_FLIGHT, async (i) => {
      const s = performance.now();
      await beat(i);
      requestMs[i] = performance.now() - s;
    });
    const elapsedMs = performance.now() - t;
    windows.heartbeats = { fromUs, toUs: monotonicUs() };
    const coordAfter = cpuTimeMs(coord.pid);
    const serverAfter = ctx.store.serverCpuMs?.() ?? null;
    const perS = (total * 1000) / elapsedMs;
    const coordUs =
      coordBefore !== null && coordAfter !== null ? ((coordAfter - coordBefore) * 1000) / total : null;
    const serverUs =
      serverBefore !== null && serverAfter !== null ? ((serverAfter - serverBefore) * 1000) / total : null;
    Object.assign(details, {
      elapsedMs: round(elapsedMs),
      requestMs: roundSummary(summarize(Array.from(requestMs))),
      coordinatorCpuUsPerHeartbeat: coordUs === null ? null : round(coordUs, 1),
      storeServerCpuUsPerHeartbeat: serverUs === null ? null : round(serverUs, 1),
    });

    metrics.push({
      workload: 'heartbeats',
      metric: `agent heartbeats, ${AGENTS} agents × ${TASKS_PER_AGENT} tasks, ${IN_FLIGHT} in flight`,
      value: perS,
      unit: 'beats/s',
    });
    metrics.push({
      workload: 'heartbeats',
      metric: 'coordinator CPU per heartbeat',
      value: coordUs,
      unit: 'µs',
    });
    if (ctx.store.serverCpuMs !== undefined) {
      metrics.push({
        workload: 'heartbeats',
        metric: 'PostgreSQL server CPU per heartbeat',
        value: serverUs,
        unit: 'µs',
      });
    }
    metrics.push({
      workload: 'heartbeats',
      metric: `agents one coordinator core watches (a beat every ${INTERVAL_S} s)`,
      value: coordUs === null ? null : Math.floor((1e6 / coordUs) * INTERVAL_S),
      unit: 'agents',
    });
  } finally {
    http.close();
    admin.close();
    const { cpuProfile } = await coord.stop();
    attachProfile(ctx, details, cpuProfile, windows);
  }
  return result;
}
