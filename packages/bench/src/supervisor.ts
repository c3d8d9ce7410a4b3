/**
 * Supervisor: what `rouse supervise` costs with 200 children (quick: 50). One supervisor runs 200
 * plain programs (`sleep`, no SDK), so each of its heartbeats — one a second under the bench's policy
 * — carries 200 children's /proc samples and stands for 200 agents' heartbeats. Measured over a
 * steady window: the supervisor's CPU (its /proc sampling included), the coordinator's CPU per
 * supervisor heartbeat and per child it renews (above what it spends idle, measured first), and that
 * every child stays `running`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ListAgentsResponse } from '@rouse/protocol';
import { diffCounts, requestCounts } from './coordinator-metrics.js';
import { startCoordinator } from './coordinator-process.js';
import { HttpClient } from './http-client.js';
import { cpuTimeMs } from './proc.js';
import { monotonicUs, type ProfileWindow } from './profile-summary.js';
import { round } from './stats.js';
import { type SuperviseProcess, startSupervise } from './supervise-process.js';
import { attachProfile, type Metric, type WorkloadContext, type WorkloadResult } from './workload.js';

const HEARTBEAT_ROUTE = 'POST /v1/agents/:agentId/heartbeat';
const POLICY = `
policies:
  - name: bench
    agent_type: "*"
    heartbeat: { expected_interval: 1s, timeout_factor: 5 }
`;

export async function supervisor(ctx: WorkloadContext): Promise<WorkloadResult> {
  const children = ctx.quick ? 50 : 200;
  const windowMs = ctx.quick ? 10_000 : 60_000;
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = { children, windowMs, heartbeatIntervalMs: 1000 };
  const result: WorkloadResult = { workload: 'supervisor', store: ctx.store.name, metrics, details };
  const windows: Record<string, ProfileWindow> = {};
  const coord = await startCoordinator({
    store: ctx.store,
    dataFiles: { 'policies.yaml': POLICY },
    cpuProfileDir: ctx.cpuProfileDir,
  });
  const admin = new HttpClient({ url: coord.url, token: coord.adminToken, maxSockets: 2 });
  const dir = mkdtempSync(join(tmpdir(), 'rouse-bench-host-'));
  let sup: SuperviseProcess | null = null;
  try {
    const config = join(dir, 'host.yaml');
    writeFileSync(
      config,
      `name: bench-host\nprograms:\n  - name: sleeper\n    command: ["sleep", "100000"]\n    instances: ${children}\n    sdk: false\n    stop: { grace: 1s }\n`,
    );
    // What the coordinator spends with nobody talking to it (its own timers), to subtract.
    const idleMs = ctx.quick ? 5000 : 15_000;
    const idleBefore = cpuTimeMs(coord.pid);
    await new Promise((r) => setTimeout(r, idleMs));
    const idleAfter = cpuTimeMs(coord.pid);
    const idleCpuPerMs = idleBefore !== null && idleAfter !== null ? (idleAfter - idleBefore) / idleMs : null;
    ctx.log(`supervisor: one supervisor, ${children} plain children`);
    sup = startSupervise(coord, config);
    const running = async () =>
      (await admin.get<ListAgentsResponse>('/v1/agents?agentType=sleeper')).agents.filter(
        (a) => a.status === 'running' && a.lastHeartbeatAt !== null,
      ).length;
    const deadline = Date.now() + 60_000;
    while ((await running()) < children) {
      if (sup.child.exitCode !== null) throw new Error(`rouse supervise exited: ${sup.stderr()}`);
      if (Date.now() > deadline) throw new Error(`not every child was running after 60 s: ${sup.stderr()}`);
      await new Promise((r) => setTimeout(r, 250));
    }

    const supBefore = cpuTimeMs(sup.child.pid!);
    const coordBefore = cpuTimeMs(coord.pid);
    const countsBefore = await requestCounts(admin);
    const fromUs = monotonicUs();
    const t = performance.now();
    await new Promise((r) => setTimeout(r, windowMs));
    const elapsedMs = performance.now() - t;
    windows.steady = { fromUs, toUs: monotonicUs() };
    const supAfter = cpuTimeMs(sup.child.pid!);
    const coordAfter = cpuTimeMs(coord.pid);
    const beats = diffCounts(countsBefore, await requestCounts(admin))?.[HEARTBEAT_ROUTE] ?? null;
    const stillRunning = await running();

    const supCpuPercent =
      supBefore !== null && supAfter !== null ? ((supAfter - supBefore) / elapsedMs) * 100 : null;
    const coordMs = coordBefore !== null && coordAfter !== null ? coordAfter - coordBefore : null;
    const busyMs =
      coordMs !== null && idleCpuPerMs !== null ? Math.max(0, coordMs - idleCpuPerMs * elapsedMs) : null;
    const perBeatUs = busyMs !== null && beats ? (busyMs * 1000) / beats : null;
    Object.assign(details, {
      elapsedMs: round(elapsedMs),
      supervisorHeartbeats: beats,
      supervisorCpuPercent: supCpuPercent === null ? null : round(supCpuPercent, 2),
      coordinatorCpuMs: coordMs,
      coordinatorIdleCpuPercent: idleCpuPerMs === null ? null : round(idleCpuPerMs * 100, 2),
      childrenRunningAtEnd: stillRunning,
    });
    metrics.push({
      workload: 'supervisor',
      metric: `supervisor CPU with ${children} children (1 beat/s)`,
      value: supCpuPercent === null ? null : round(supCpuPercent, 2),
      unit: '% of a core',
    });
    metrics.push({
      workload: 'supervisor',
      metric: `coordinator CPU per supervisor heartbeat (${children} children), above idle`,
      value: perBeatUs === null ? null : round(perBeatUs, 1),
      unit: 'µs',
    });
    metrics.push({
      workload: 'supervisor',
      metric: 'coordinator CPU per supervised child beat',
      value: perBeatUs === null ? null : round(perBeatUs / children, 1),
      unit: 'µs',
    });
    metrics.push({
      workload: 'supervisor',
      metric: 'children running at the end',
      value: stillRunning,
      unit: 'agents',
      target: { op: '>=', value: children },
    });
    return result;
  } finally {
    await sup?.stop();
    admin.close();
    const { cpuProfile } = await coord.stop();
    attachProfile(ctx, details, cpuProfile, windows);
    rmSync(dir, { recursive: true, force: true });
  }
}
