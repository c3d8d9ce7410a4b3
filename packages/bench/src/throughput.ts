/**
 * Throughput: 20,000 pre-created no-op tasks, then ONE worker process at concurrency 16. The clock
 * runs from the moment the worker starts claiming until the coordinator confirms that no task of the
 * run is unfinished. Also samples the peak RSS (VmHWM) of the coordinator and the worker at the end.
 */

import { spawnJsonChild, stopJsonChild } from './child.js';
import { diffCounts, requestCounts } from './coordinator-metrics.js';
import { startCoordinator } from './coordinator-process.js';
import { HttpClient } from './http-client.js';
import { cpuTimeMs, peakRssBytes } from './proc.js';
import { monotonicUs, type ProfileWindow } from './profile-summary.js';
import { round } from './stats.js';
import { anyTask, createBatched, listAll, sleep, UNFINISHED } from './tasks.js';
import type { WorkerProcessConfig } from './worker-process.js';
import { attachProfile, type Metric, type WorkloadContext, type WorkloadResult } from './workload.js';

const CONCURRENCY = 16;

export async function throughput(ctx: WorkloadContext): Promise<WorkloadResult> {
  const total = ctx.quick ? 3000 : 20_000;
  const type = 'bench.throughput';
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = {
    tasks: total,
    concurrency: CONCURRENCY,
    workerMode: ctx.workerMode,
  };
  const result: WorkloadResult = { workload: 'throughput', store: ctx.store.name, metrics, details };

  const windows: Record<string, ProfileWindow> = {};
  const coord = await startCoordinator({ store: ctx.store, cpuProfileDir: ctx.cpuProfileDir });
  const http = new HttpClient({ url: coord.url, token: coord.adminToken, maxSockets: 4 });
  try {
    ctx.log(`throughput: creating ${total} tasks`);
    const createStart = performance.now();
    await createBatched(http, total, 1000, 4, (i) => ({ type, payload: { i } }));
    details.precreateMs = round(performance.now() - createStart);

    ctx.log(`throughput: starting one ${ctx.workerMode} worker at concurrency ${CONCURRENCY}`);
    const requestsBefore = await requestCounts(http);
    const coordCpuBefore = cpuTimeMs(coord.pid);
    const serverCpuBefore = ctx.store.serverCpuMs?.() ?? null;
    const config: WorkerProcessConfig = {
      url: coord.url,
      token: coord.agentToken,
      agentType: 'bench-throughput',
      taskTypes: [type],
      concurrency: CONCURRENCY,
      mode: ctx.workerMode,
    };
    const worker = spawnJsonChild('worker-process', config);
    try {
      const starting = await worker.waitFor((m) => m.type === 'starting', 30_000);
      const startedAt = starting.at as number;
      const fromUs = monotonicUs();
      const done = await worker.waitFor(
        (m) => m.type === 'count' && (m.completed as number) >= total,
        ctx.quick ? 60_000 : 180_000,
      );
      // Confirm with the coordinator: nothing of this run is still unfinished.
      const confirmDeadline = Date.now() + 30_000;
      while (await anyTask(http, { type, statuses: UNFINISHED })) {
        if (Date.now() > confirmDeadline)
          throw new Error('worker reported all done, coordinator still has unfinished tasks');
        await sleep(10);
      }
      const confirmedAt = Date.now();
      windows['measured phase'] = { fromUs, toUs: monotonicUs() };
      const coordCpuAfter = cpuTimeMs(coord.pid);
      const serverCpuAfter = ctx.store.serverCpuMs?.() ?? null;
      const requests = diffCounts(requestsBefore, await requestCounts(http));
      const workerCpu = cpuTimeMs(worker.pid);
      const coordinatorPeakRss = peakRssBytes(coord.pid);
      const workerPeakRss = peakRssBytes(worker.pid);

      const elapsedMs = confirmedAt - startedAt;
      const perS = (total * 1000) / elapsedMs;
      const first = worker.messages.find((m) => m.type === 'first');
      details.startedAt = startedAt;
      if (requests) {
        // GET /v1/tasks here are the bench's own confirmation polls.
        details.requests = requests;
        const claims = Object.entries(requests).find(([k]) => k.endsWith('/claim'))?.[1];
        if (claims) details.tasksPerClaimRequest = round(total / claims, 2);
      }
      details.firstHandlerAfterMs = first ? (first.at as number) - startedAt : null;
      details.workerDoneAfterMs = (done.at as number) - startedAt;
      details.confirmedAfterMs = elapsedMs;
      details.workerSideTasksPerS = round((total * 1000) / ((done.at as number) - startedAt));
      // CPU per task is the number that survives a busy machine: the rate is what one core could do.
      let coordinatorUsPerTask: number | null = null;
      let workerUsPerTask: number | null = null;
      if (coordCpuBefore !== null && coordCpuAfter !== null) {
        const coordMs = coordCpuAfter - coordCpuBefore;
        details.coordinatorCpuMs = coordMs;
        details.coordinatorCpuPercentOfOneCore = round((100 * coordMs) / elapsedMs, 1);
        coordinatorUsPerTask = (coordMs * 1000) / total;
        details.coordinatorOneCoreCeilingPerS = round(1e6 / coordinatorUsPerTask, 0);
      }
      // The database's own share (an embedded PostgreSQL here): the third process of every round trip.
      let serverUsPerTask: number | null = null;
      if (serverCpuBefore !== null && serverCpuAfter !== null) {
        details.storeServerCpuMs = serverCpuAfter - serverCpuBefore;
        serverUsPerTask = ((serverCpuAfter - serverCpuBefore) * 1000) / total;
      }
      if (workerCpu !== null) {
        details.workerCpuMs = workerCpu;
        details.workerCpuPercentOfOneCore = round((100 * workerCpu) / elapsedMs, 1);
        workerUsPerTask = (workerCpu * 1000) / total;
      }
      // Progress curve: completions seen by the worker over time (to spot a slow start or tail).
      details.progress = worker.messages
        .filter((m) => m.type === 'count')
        .filter((_, i, all) => i % Math.max(1, Math.floor(all.length / 40)) === 0 || i === all.length - 1)
        .map((m) => ({ afterMs: (m.at as number) - startedAt, completed: m.completed }));

      metrics.push({
        workload: 'throughput',
        metric: `${total.toLocaleString('en-US')} no-op tasks, 1 worker × ${CONCURRENCY}`,
        value: perS,
        unit: 'tasks/s',
        ...(ctx.store.targets.throughputPerS
          ? { target: { op: '>=' as const, value: ctx.store.targets.throughputPerS } }
          : {}),
      });
      metrics.push({
        workload: 'throughput',
        metric: 'coordinator CPU per task',
        value: coordinatorUsPerTask,
        unit: 'µs',
      });
      metrics.push({
        workload: 'throughput',
        metric: 'worker CPU per task (incl. start-up)',
        value: workerUsPerTask,
        unit: 'µs',
      });
      if (ctx.store.serverCpuMs !== undefined) {
        metrics.push({
          workload: 'throughput',
          metric: 'PostgreSQL server CPU per task',
          value: serverUsPerTask,
          unit: 'µs',
        });
      }
      metrics.push({
        workload: 'rss',
        metric: 'coordinator peak RSS (VmHWM)',
        value: coordinatorPeakRss,
        unit: 'bytes',
      });
      metrics.push({
        workload: 'rss',
        metric: 'worker peak RSS (VmHWM)',
        value: workerPeakRss,
        unit: 'bytes',
      });

      // A cheap cross-check of the count: page through the completed tasks of this run.
      const completed = await listAll(http, { type, statuses: ['completed'] });
      details.completedCountByCoordinator = completed.length;
      if (completed.length !== total) {
        result.error = `coordinator lists ${completed.length} completed tasks, expected ${total}`;
      }
      details.maxAttemptSeen = completed.reduce((m, t) => Math.max(m, t.attempt), 0);
    } finally {
      await stopJsonChild(worker);
    }
  } finally {
    http.close();
    const { cpuProfile } = await coord.stop();
    attachProfile(ctx, details, cpuProfile, windows);
  }
  return result;
}
