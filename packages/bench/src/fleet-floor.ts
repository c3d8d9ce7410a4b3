/**
 * Fleet floor: the `fleet` workload's agents and schedule (10,000 agents in the same processes, a beat
 * every 5 s ± 10 %; quick: 1,000) against `floor-server.ts` instead of a coordinator — a bare HTTP
 * server that spends a fixed CPU time on each beat and nothing else. For each cost per beat it reports
 * the heartbeat latency the agents see; the last row batches the beats as a group commit does. Read
 * next to `fleet`: it says what a coordinator may spend per beat, on this machine and with these
 * clients, for a given p99 — whatever it spends it on — and what batching costs on top.
 */
import { type JsonChild, spawnJsonChild, stopJsonChild } from './child.js';
import { fleetPlan, INTERVAL_MS, totalAgents } from './fleet-plan.js';
import {
  awaitRegistered,
  collectReports,
  type FleetProcess,
  spawnFleet,
  stopFleet,
} from './fleet-processes.js';
import { cpuTimeMs, runQueueWaitMs } from './proc.js';
import { round, roundSummary, summarize } from './stats.js';
import { sleep } from './tasks.js';
import type { Metric, WorkloadContext, WorkloadResult } from './workload.js';

const W = 'fleet-floor';
/**
 * CPU per beat the floor server spends (µs: none, and around what a coordinator spends), and the
 * group-commit window it batches beats in (ms; 0: each beat answered as soon as its work is done).
 */
const FLOORS = [
  { workUs: 0, batchMs: 0 },
  { workUs: 150, batchMs: 0 },
  { workUs: 250, batchMs: 0 },
  { workUs: 250, batchMs: 2 },
] as const;

export async function fleetFloor(ctx: WorkloadContext): Promise<WorkloadResult> {
  const plan = fleetPlan(ctx.quick);
  const measureMs = ctx.quick ? 10_000 : 45_000;
  const warmupMs = ctx.quick ? 5000 : 8000;
  const metrics: Metric[] = [];
  const runs: Record<string, unknown>[] = [];
  const details: Record<string, unknown> = {
    agents: totalAgents(plan),
    intervalMs: INTERVAL_MS,
    measureMs,
    runs,
  };
  const result: WorkloadResult = { workload: W, store: 'none', metrics, details };
  for (const { workUs, batchMs } of FLOORS) {
    let server: JsonChild | null = null;
    let procs: FleetProcess[] = [];
    try {
      server = spawnJsonChild('floor-server', { workUs, batchMs });
      const listening = await server.waitFor((m) => m.type === 'listening', 10_000);
      procs = spawnFleet(listening.url as string, 'floor', plan);
      await awaitRegistered(procs, ctx.quick ? 60_000 : 300_000, ctx.log);
      await sleep(warmupMs);
      for (const p of procs) p.child.send('measure');
      const cpuBefore = cpuTimeMs(server.pid);
      const waitBefore = runQueueWaitMs(server.pid);
      const started = performance.now();
      await sleep(measureMs);
      const reports = await collectReports(procs);
      const elapsedMs = performance.now() - started;
      const cpuAfter = cpuTimeMs(server.pid);
      const waitAfter = runQueueWaitMs(server.pid);
      const waitMsPerS =
        waitBefore === null || waitAfter === null
          ? null
          : round(((waitAfter - waitBefore) * 1000) / elapsedMs, 1);
      const latencies = reports.flatMap((r) => r.latenciesMs);
      const errors = reports.reduce((n, r) => n + r.errors, 0);
      const latency = summarize(latencies);
      const cores = cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / elapsedMs;
      runs.push({
        workUs,
        batchMs,
        beats: latencies.length,
        beatsPerS: round((latencies.length * 1000) / elapsedMs),
        errors,
        latencyMs: roundSummary(latency),
        serverCores: cores === null ? null : round(cores, 3),
        serverRunQueueWaitMsPerS: waitMsPerS,
      });
      const label = `floor server at ${workUs} µs of CPU a beat${batchMs > 0 ? `, in ${batchMs} ms batches` : ''}`;
      ctx.log(
        `${W}: ${label}: p50 ${round(latency.p50)} ms, p99 ${round(latency.p99)} ms, server ${cores === null ? '?' : round(cores, 2)} cores`,
      );
      metrics.push({
        workload: W,
        metric: `${label}: heartbeat latency p50 (client)`,
        value: latency.p50,
        unit: 'ms',
      });
      metrics.push({
        workload: W,
        metric: `${label}: heartbeat latency p99 (client)`,
        value: latency.p99,
        unit: 'ms',
      });
      metrics.push({ workload: W, metric: `${label}: server CPU`, value: cores, unit: 'cores' });
      metrics.push({
        workload: W,
        metric: `${label}: server waiting for a CPU (run queue)`,
        value: waitMsPerS,
        unit: 'ms/s',
      });
      if (errors > 0)
        metrics.push({ workload: W, metric: `${label}: heartbeat errors`, value: errors, unit: '' });
    } finally {
      await stopFleet(procs);
      if (server !== null) await stopJsonChild(server);
    }
  }
  return result;
}
