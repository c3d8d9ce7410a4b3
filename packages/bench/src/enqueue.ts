/**
 * Enqueue: how fast tasks can be created over HTTP, with no workers.
 * - batched: `POST /v1/tasks/batch`, 1,000 tasks per request, 4 requests in flight, minimal answers;
 * - one at a time: `POST /v1/tasks`, 8 requests in flight (8 clients, each waiting for its answer).
 * Each phase starts with a short warm-up that is not counted.
 */
import { startCoordinator } from './coordinator-process.js';
import { HttpClient } from './http-client.js';
import { cpuTimeMs } from './proc.js';
import { monotonicUs, type ProfileWindow } from './profile-summary.js';
import { round, roundSummary, summarize } from './stats.js';
import { createBatched, runConcurrent } from './tasks.js';
import { attachProfile, type Metric, type WorkloadContext, type WorkloadResult } from './workload.js';

const BATCH_SIZE = 1000;
const BATCH_PARALLEL = 4;
const SINGLE_IN_FLIGHT = 8;

export async function enqueue(ctx: WorkloadContext): Promise<WorkloadResult> {
  const batchedTotal = ctx.quick ? 10_000 : 50_000;
  const singleTotal = ctx.quick ? 3000 : 20_000;
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = {
    batched: { tasks: batchedTotal, batchSize: BATCH_SIZE, parallel: BATCH_PARALLEL },
    single: { tasks: singleTotal, inFlight: SINGLE_IN_FLIGHT },
  };
  const result: WorkloadResult = { workload: 'enqueue', store: ctx.store.name, metrics, details };
  const windows: Record<string, ProfileWindow> = {};
  const coord = await startCoordinator({ store: ctx.store, cpuProfileDir: ctx.cpuProfileDir });
  const http = new HttpClient({ url: coord.url, token: coord.adminToken, maxSockets: 16 });
  try {
    const make = (i: number) => ({ type: 'bench.enqueue', payload: { i } });

    ctx.log(`enqueue: batched, ${batchedTotal} tasks`);
    await createBatched(http, BATCH_SIZE * 2, BATCH_SIZE, BATCH_PARALLEL, make); // warm-up
    let cpu = cpuSnapshot(coord.pid);
    let fromUs = monotonicUs();
    let t = performance.now();
    await createBatched(http, batchedTotal, BATCH_SIZE, BATCH_PARALLEL, make);
    const batchedMs = performance.now() - t;
    windows.batched = { fromUs, toUs: monotonicUs() };
    const batchedPerS = (batchedTotal * 1000) / batchedMs;
    Object.assign(details.batched as Record<string, unknown>, {
      elapsedMs: round(batchedMs),
      ...cpu(batchedMs, batchedTotal),
    });

    ctx.log(`enqueue: one at a time, ${singleTotal} tasks, ${SINGLE_IN_FLIGHT} in flight`);
    await runConcurrent(500, SINGLE_IN_FLIGHT, async (i) => {
      await http.post('/v1/tasks', make(i), { parse: false });
    }); // warm-up
    const requestMs = new Float64Array(singleTotal);
    cpu = cpuSnapshot(coord.pid);
    fromUs = monotonicUs();
    t = performance.now();
    await runConcurrent(singleTotal, SINGLE_IN_FLIGHT, async (i) => {
      const s = performance.now();
      await http.post('/v1/tasks', make(i), { parse: false });
      requestMs[i] = performance.now() - s;
    });
    const singleMs = performance.now() - t;
    windows['one at a time'] = { fromUs, toUs: monotonicUs() };
    const singlePerS = (singleTotal * 1000) / singleMs;
    Object.assign(details.single as Record<string, unknown>, {
      elapsedMs: round(singleMs),
      ...cpu(singleMs, singleTotal),
      requestMs: roundSummary(summarize(Array.from(requestMs))),
    });

    metrics.push({
      workload: 'enqueue',
      metric: `batched (${BATCH_SIZE}/request, ${BATCH_PARALLEL} in flight)`,
      value: batchedPerS,
      unit: 'tasks/s',
      ...(ctx.store.targets.enqueueBatchedPerS
        ? { target: { op: '>=' as const, value: ctx.store.targets.enqueueBatchedPerS } }
        : {}),
    });
    metrics.push({
      workload: 'enqueue',
      metric: `one at a time (${SINGLE_IN_FLIGHT} in flight)`,
      value: singlePerS,
      unit: 'tasks/s',
      ...(ctx.store.targets.enqueueSinglePerS
        ? { target: { op: '>=' as const, value: ctx.store.targets.enqueueSinglePerS } }
        : {}),
    });
  } finally {
    http.close();
    const { cpuProfile } = await coord.stop();
    attachProfile(ctx, details, cpuProfile, windows);
  }
  return result;
}

/** CPU used by the coordinator and by this (client) process from now until the returned function is called. */
function cpuSnapshot(
  coordinatorPid: number,
): (elapsedMs: number, tasks: number) => Record<string, number | null> {
  const coordBefore = cpuTimeMs(coordinatorPid);
  const selfBefore = process.cpuUsage();
  return (elapsedMs, tasks) => {
    const coordAfter = cpuTimeMs(coordinatorPid);
    const coordMs = coordBefore !== null && coordAfter !== null ? coordAfter - coordBefore : null;
    const self = process.cpuUsage(selfBefore);
    return {
      coordinatorCpuPercentOfOneCore: coordMs === null ? null : round((100 * coordMs) / elapsedMs, 1),
      coordinatorCpuUsPerTask: coordMs === null ? null : round((coordMs * 1000) / tasks, 1),
      clientCpuPercentOfOneCore: round((100 * (self.user + self.system)) / 1000 / elapsedMs, 1),
    };
  };
}
