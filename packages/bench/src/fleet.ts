/**
 * Fleet: one coordinator watching 10,000 monitored agents (quick: 1,000) of agent type `bench-fleet`
 * under a watchdog policy (`fleet-plan.ts`: a beat every 5 s, lost after 3 intervals, stalled when
 * `metadata.step` has not moved for 20 s, resource limits no healthy agent reaches). The agents live
 * in a few child processes (`fleet-agents.ts`: a raw keep-alive client, not the SDK, so the
 * coordinator is what is measured); each beats every 5 s ± 10 % with status, metrics and a moving
 * `step`. After registration (a few at a time per process) and a warm-up:
 * 1. healthy phase (2 min; quick 20 s): heartbeat latency per request (client clock) p50/p99,
 *    beats/s, the coordinator's CPU as a share of one core and per heartbeat, and the conditions it
 *    opened meanwhile (none should open: no agent may show a condition afterwards);
 * 2. lost: the 100 agents of their own process are SIGSTOPped; how late after its lease ran out each
 *    was marked lost (`fleet-detection.ts`);
 * 3. stalled: 100 agents of another process keep beating but stop moving `step`; how late after
 *    `progressChangedAt + 20 s` each was marked stalled.
 */
import type { Intervention, ListAgentsResponse, PoliciesResponse } from '@rouse/protocol';
import { startCoordinator } from './coordinator-process.js';
import { type EventStream, openEventStream } from './event-stream.js';
import { type DetectionResult, measureLost, measureStalled, OpenedConditions } from './fleet-detection.js';
import {
  FLEET_AGENT_TYPE,
  type FleetPlan,
  fleetPlan,
  fleetPolicyYaml,
  HEARTBEAT_TIMEOUT_MS,
  INTERVAL_MS,
  STALL_THRESHOLD_MS,
  totalAgents,
} from './fleet-plan.js';
import {
  awaitRegistered,
  collectReports,
  type FleetProcess,
  lastAcks,
  spawnFleet,
  stopFleet,
} from './fleet-processes.js';
import { HttpClient } from './http-client.js';
import { cpuTimeMs, machineCpuMs, runQueueWaitMs } from './proc.js';
import { monotonicUs, type ProfileWindow } from './profile-summary.js';
import { bucketQuantile, histogramBuckets, seriesByLabel, sumSeries } from './prometheus-text.js';
import { round, roundSummary, summarize } from './stats.js';
import { sleep } from './tasks.js';
import { attachProfile, type Metric, type WorkloadContext, type WorkloadResult } from './workload.js';

const W = 'fleet';
const HB_HISTOGRAM = 'rouse_agent_heartbeat_duration_seconds';
/** How long the coordinator's CPU is measured before any agent registers. */
const IDLE_MS = 3000;

export async function fleet(ctx: WorkloadContext): Promise<WorkloadResult> {
  const plan = fleetPlan(ctx.quick);
  const policy = fleetPolicyYaml(ctx.ladder);
  const agents = totalAgents(plan);
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = { plan, agents, ladder: ctx.ladder, policy };
  const result: WorkloadResult = { workload: W, store: ctx.store.name, metrics, details };
  const windows: Record<string, ProfileWindow> = {};
  const coord = await startCoordinator({
    store: ctx.store,
    cpuProfileDir: ctx.cpuProfileDir,
    dataFiles: { 'policies.yaml': policy },
  });
  const admin = new HttpClient({ url: coord.url, token: coord.adminToken, maxSockets: 2 });
  let procs: FleetProcess[] = [];
  let events: EventStream | null = null;
  try {
    await checkPolicy(admin);
    // What the coordinator spends with no agent at all (its sweeps and timers), for comparison.
    const idleBefore = cpuSum(coord.pids);
    await sleep(IDLE_MS);
    const idleAfter = cpuSum(coord.pids);
    details.coordinatorIdleCores =
      idleBefore === null || idleAfter === null ? null : round((idleAfter - idleBefore) / IDLE_MS, 3);
    ctx.log(
      `${W}: ${agents} agents in ${plan.healthyProcesses + 2} processes (${plan.healthyProcesses} × ${plan.agentsPerHealthyProcess}, ${plan.lostAgents} to lose, ${plan.stalledAgents} to stall), a beat every ${INTERVAL_MS} ms ± 10 %`,
    );
    procs = spawnFleet(coord.url, coord.agentToken, plan);
    const registered = await awaitRegistered(procs, ctx.quick ? 60_000 : 300_000, ctx.log);
    const registerMs = registered.ms;
    details.registration = {
      ms: round(registerMs),
      perS: round((agents * 1000) / registerMs),
      requestMs: roundSummary(summarize(registered.registerMs)),
    };
    metrics.push({
      workload: W,
      metric: `registrations (${plan.registerConcurrency} in flight per process)`,
      value: (agents * 1000) / registerMs,
      unit: '/s',
    });
    ctx.log(`${W}: registered in ${Math.round(registerMs)} ms; warm-up ${plan.warmupMs} ms`);
    await sleep(plan.warmupMs);

    await healthyPhase(ctx, plan, agents, admin, coord.pids, procs, metrics, details, windows);

    const opened = new OpenedConditions();
    events = await openEventStream(coord.url, coord.adminToken, opened.onEvent);
    const lostProc = procs.find((p) => p.role === 'lost')!;
    const lost = await measureLost(admin, lostProc, opened, ctx.log);
    windows.lost = lost.window;
    details.lost = lost.details;
    detectionMetrics(metrics, 'lost', `since − (lastHeartbeatAt + ${HEARTBEAT_TIMEOUT_MS} ms)`, lost);
    lostProc.child.kill('SIGKILL');
    await lostProc.child.exited;

    const stalledProc = procs.find((p) => p.role === 'stalled')!;
    const stalled = await measureStalled(admin, stalledProc, opened, ctx.log);
    windows.stalled = stalled.window;
    details.stalled = stalled.details;
    const due = `(progressChangedAt + ${STALL_THRESHOLD_MS / 1000} s)`;
    if (stalled.openedExcessMs !== null) {
      const partial = stalled.openedExcessMs.count < plan.stalledAgents;
      detectionMetrics(
        metrics,
        'stalled',
        `opened (event at) − ${due}${partial ? ` [${stalled.openedExcessMs.count} events]` : ''}`,
        { ...stalled, excessMs: stalled.openedExcessMs },
      );
    }
    metrics.push({
      workload: W,
      metric: `stalled: condition.since − ${due} p99 (since = the due time, by the detector)`,
      value: stalled.excessMs.p99,
      unit: 'ms',
    });
    if (events.endedBecause !== null) details.eventStreamEnded = events.endedBecause;
    if (ctx.ladder) details.interventions = await interventionCounts(admin, ctx, metrics, plan);
  } catch (err) {
    // The coordinator logs the cause of an internal error; say it here.
    const log = coord.logTail().trim();
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(log ? `${message}\ncoordinator log (last lines):\n${log.slice(-2000)}` : message);
  } finally {
    events?.close();
    await stopFleet(procs);
    admin.close();
    const { cpuProfile } = await coord.stop();
    attachProfile(ctx, details, cpuProfile, windows);
  }
  return result;
}

/**
 * What the recovery ladder did to the lost and stalled agents: interventions by action and state, and
 * from each condition opening to its first intervention (every attempt under way has started).
 */
async function interventionCounts(
  admin: HttpClient,
  ctx: WorkloadContext,
  metrics: Metric[],
  plan: FleetPlan,
): Promise<Record<string, number>> {
  const res = await admin.get<{ interventions: Intervention[] }>('/v1/interventions?limit=1000');
  const counts: Record<string, number> = {};
  const startMs: number[] = [];
  for (const i of res.interventions) {
    const key = `${i.condition}/${i.action}/${i.state}`;
    counts[key] = (counts[key] ?? 0) + 1;
    const since = i.evidence.conditionSince;
    if (i.attempt === 1 && typeof since === 'number') startMs.push(i.startedAt - since);
  }
  const expected = plan.lostAgents + plan.stalledAgents;
  ctx.log(`${W}: ladder interventions ${JSON.stringify(counts)}`);
  if (startMs.length > 0) {
    const s = summarize(startMs);
    metrics.push({
      workload: W,
      metric: `ladder: condition opened → first rung started p99 (${startMs.length} of ${expected} conditions)`,
      value: s.p99,
      unit: 'ms',
    });
  }
  return counts;
}

/** The policy file was read: the fleet's policy is in force with our numbers. */
async function checkPolicy(admin: HttpClient): Promise<void> {
  const res = await admin.get<PoliciesResponse>('/v1/policies');
  const p = res.policies.find((x) => x.agentType === FLEET_AGENT_TYPE);
  if (
    p === undefined ||
    p.heartbeat.expectedIntervalMs !== INTERVAL_MS ||
    p.heartbeat.expectedIntervalMs * p.heartbeat.timeoutFactor !== HEARTBEAT_TIMEOUT_MS ||
    p.stallDetection.progressField !== 'step' ||
    p.stallDetection.stallThresholdMs !== STALL_THRESHOLD_MS
  ) {
    throw new Error(
      `the coordinator did not apply the fleet policy from policies.yaml (source ${res.source}, last error ${JSON.stringify(res.lastError)}): ${JSON.stringify(p ?? null)}`,
    );
  }
}

/** The sum of `read(pid)` over `pids`, or null when one of them cannot be read. */
function sumOf(pids: readonly number[], read: (pid: number) => number | null): number | null {
  let sum = 0;
  for (const pid of pids) {
    const ms = read(pid);
    if (ms === null) return null;
    sum += ms;
  }
  return sum;
}

const cpuSum = (pids: readonly number[]) => sumOf(pids, cpuTimeMs);

function benchCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function healthyPhase(
  ctx: WorkloadContext,
  plan: FleetPlan,
  agents: number,
  admin: HttpClient,
  coordPids: readonly number[],
  procs: FleetProcess[],
  metrics: Metric[],
  details: Record<string, unknown>,
  windows: Record<string, ProfileWindow>,
): Promise<void> {
  const childPids = procs.map((p) => p.child.pid);
  const metricsBefore = await admin.getText('/metrics');
  const before = {
    coord: cpuSum(coordPids),
    coordWait: sumOf(coordPids, runQueueWaitMs),
    children: cpuSum(childPids),
    bench: benchCpuMs(),
    server: ctx.store.serverCpuMs?.() ?? null,
    machine: machineCpuMs(),
  };
  const fromUs = monotonicUs();
  const t = performance.now();
  for (const p of procs) p.child.send('measure');
  ctx.log(`${W}: healthy phase, ${plan.healthyMs} ms`);
  await sleep(plan.healthyMs);
  const reports = await collectReports(procs);
  const elapsedMs = performance.now() - t;
  const after = {
    coord: cpuSum(coordPids),
    coordWait: sumOf(coordPids, runQueueWaitMs),
    children: cpuSum(childPids),
    bench: benchCpuMs(),
    server: ctx.store.serverCpuMs?.() ?? null,
    machine: machineCpuMs(),
  };
  windows.healthy = { fromUs, toUs: monotonicUs() };
  const metricsAfter = await admin.getText('/metrics');

  const latencies: number[] = [];
  let sent = 0;
  let errors = 0;
  const firstErrors: string[] = [];
  for (const r of reports) {
    for (const ms of r.latenciesMs) latencies.push(ms);
    sent += r.sent;
    errors += r.errors;
    firstErrors.push(...r.firstErrors);
  }
  const latency = summarize(latencies);
  const okBeats =
    sumSeries(metricsAfter, 'rouse_agent_heartbeats_total', { outcome: 'ok' }) -
    sumSeries(metricsBefore, 'rouse_agent_heartbeats_total', { outcome: 'ok' });
  const perS = (okBeats * 1000) / elapsedMs;
  const coordMs = before.coord !== null && after.coord !== null ? after.coord - before.coord : null;
  const coordWaitMs =
    before.coordWait !== null && after.coordWait !== null ? after.coordWait - before.coordWait : null;
  const waitMsPerS = coordWaitMs === null ? null : round((coordWaitMs * 1000) / elapsedMs, 1);
  const serverMs = before.server !== null && after.server !== null ? after.server - before.server : null;
  const childrenMs =
    before.children !== null && after.children !== null ? after.children - before.children : null;
  const benchMs = after.bench - before.bench;
  let noisePercent: number | null = null;
  if (before.machine && after.machine && coordMs !== null && childrenMs !== null) {
    const total = after.machine.totalMs - before.machine.totalMs;
    const busy = after.machine.busyMs - before.machine.busyMs;
    const ours = coordMs + childrenMs + benchMs + (serverMs ?? 0);
    if (total > 0) noisePercent = round((100 * Math.max(0, busy - ours)) / total, 1);
  }
  const hbBefore = histogramBuckets(metricsBefore, HB_HISTOGRAM);
  const hbAfter = histogramBuckets(metricsAfter, HB_HISTOGRAM);
  const serverP50 = bucketQuantile(hbBefore, hbAfter, 0.5);
  const serverP99 = bucketQuantile(hbBefore, hbAfter, 0.99);
  const conditionsOpened =
    sumSeries(metricsAfter, 'rouse_agent_conditions_total', { state: 'opened' }) -
    sumSeries(metricsBefore, 'rouse_agent_conditions_total', { state: 'opened' });

  // Every agent, as the coordinator sees it now (one large read, after the measured window).
  const listStarted = performance.now();
  const all = await admin.get<ListAgentsResponse>(`/v1/agents?agentType=${FLEET_AGENT_TYPE}&limit=10000`);
  const listMs = performance.now() - listStarted;
  const byStatus: Record<string, number> = {};
  const withConditions = all.agents.filter((a) => a.conditions.length > 0);
  for (const a of all.agents) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
  // Every agent's last acknowledged heartbeat, per the agents themselves.
  let oldestAckAgeMs = 0;
  let neverAcked = 0;
  for (const p of procs) {
    const { at, acks } = await lastAcks(p);
    for (const ack of acks.values()) {
      if (ack === null) neverAcked++;
      else oldestAckAgeMs = Math.max(oldestAckAgeMs, at - ack);
    }
  }

  const s = (ms: number | null) => (ms === null ? null : round(ms / elapsedMs, 3));
  Object.assign(details, {
    healthy: {
      elapsedMs: round(elapsedMs),
      heartbeatsSent: sent,
      heartbeatsOkByCoordinator: okBeats,
      beatsPerS: round(perS, 1),
      errors,
      firstErrors: firstErrors.slice(0, 5),
      latencyMs: roundSummary(latency, 3),
      coordinatorHandlingMs: {
        p50AtMost: serverP50 === null ? null : serverP50 * 1000,
        p99AtMost: serverP99 === null ? null : serverP99 * 1000,
      },
      cpuCores: {
        coordinator: s(coordMs),
        agentProcesses: s(childrenMs),
        bench: s(benchMs),
        storeServer: s(serverMs),
      },
      coordinatorRunQueueWaitMsPerS: waitMsPerS,
      coordinatorCpuUsPerHeartbeat: coordMs === null ? null : round((coordMs * 1000) / okBeats, 1),
      storeServerCpuUsPerHeartbeat: serverMs === null ? null : round((serverMs * 1000) / okBeats, 1),
      otherProcessesCpuPercent: noisePercent,
      conditionsOpened,
      agentsByStatus: byStatus,
      agentsByStatusMetric: seriesByLabel(metricsAfter, 'rouse_agents', 'status'),
      agentsWithConditions: withConditions.length,
      conditionsSeen: withConditions.slice(0, 5).map((a) => ({ id: a.id, conditions: a.conditions })),
      listAllAgentsMs: round(listMs),
      agentsListed: all.agents.length,
      oldestLastAckAgeMs: round(oldestAckAgeMs),
      agentsNeverAcked: neverAcked,
    },
  });
  ctx.log(
    `${W}: ${okBeats} beats (${round(perS)}/s), p50 ${round(latency.p50)} ms, p99 ${round(latency.p99)} ms, coordinator ${s(coordMs)} cores, ${conditionsOpened} conditions opened`,
  );
  if (all.agents.length !== agents) {
    throw new Error(`GET /v1/agents listed ${all.agents.length} fleet agents, ${agents} were registered`);
  }

  const m = (metric: string, value: number | null, unit: string, target?: Metric['target']) =>
    metrics.push({ workload: W, metric, value, unit, ...(target ? { target } : {}) });
  const per = `${agents} agents, a beat every ${INTERVAL_MS / 1000} s ± 10 %`;
  m(`heartbeat latency p50 (client, ${per})`, latency.p50, 'ms');
  m('heartbeat latency p99 (client)', latency.p99, 'ms', { op: '<=', value: 10 });
  m('heartbeat latency max (client)', latency.max, 'ms');
  m(
    'heartbeat handling p99 (coordinator histogram, bucket bound)',
    serverP99 === null ? null : serverP99 * 1000,
    'ms',
  );
  m('heartbeats', perS, 'beats/s');
  m('heartbeat errors', errors, '', { op: '<=', value: 0 });
  const coresTarget = ctx.store.targets.fleetCoordinatorCores;
  m(
    'coordinator CPU, healthy phase',
    s(coordMs),
    'cores',
    coresTarget === undefined ? undefined : { op: '<=', value: coresTarget },
  );
  m('coordinator CPU per heartbeat', coordMs === null ? null : (coordMs * 1000) / okBeats, 'µs');
  // Runnable but not running: the other processes (the agents above all) had both cores. Part of
  // every beat's latency that no work inside the coordinator explains; fleet-floor reports the same.
  m('coordinator main thread waiting for a CPU (run queue), healthy phase', waitMsPerS, 'ms/s');
  if (ctx.store.serverCpuMs !== undefined) {
    m('PostgreSQL server CPU, healthy phase', s(serverMs), 'cores');
    m('PostgreSQL server CPU per heartbeat', serverMs === null ? null : (serverMs * 1000) / okBeats, 'µs');
  }
  m('agent processes CPU, healthy phase', s(childrenMs), 'cores');
  m('noise: CPU used by other processes, healthy phase', noisePercent, '% of machine');
  m('agents showing a condition after the healthy phase (GET /v1/agents)', withConditions.length, '', {
    op: '<=',
    value: 0,
  });
  m('conditions opened during the healthy phase (rouse_agent_conditions_total)', conditionsOpened, '', {
    op: '<=',
    value: 0,
  });
}

function detectionMetrics(metrics: Metric[], phase: string, label: string, r: DetectionResult): void {
  const n = r.excessMs.count;
  metrics.push({ workload: W, metric: `${phase}: ${label} p50`, value: r.excessMs.p50, unit: 'ms' });
  metrics.push({
    workload: W,
    metric: `${phase}: ${label} p99 (${n} agents)`,
    value: r.excessMs.p99,
    unit: 'ms',
    target: { op: '<=', value: 250 },
  });
  metrics.push({ workload: W, metric: `${phase}: ${label} max`, value: r.excessMs.max, unit: 'ms' });
  metrics.push({
    workload: W,
    metric: `${phase}: agents ${phase} that were not meant to be`,
    value: r.others,
    unit: '',
    target: { op: '<=', value: 0 },
  });
}
