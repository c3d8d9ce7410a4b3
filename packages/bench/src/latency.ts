/**
 * Latency: a steady 500 tasks/s created one at a time (`POST /v1/tasks` on a fixed schedule, not
 * back to back) for about 10 s, with one worker process at concurrency 16 waiting. Two measurements:
 * - coordinator clock: `finishedAt - createdAt` of each task (integer ms: coarse, but the coordinator's
 *   own view, and what the targets are about);
 * - client clock (sub-ms): the create request sent by the bench → the worker process seeing the
 *   coordinator acknowledge the completion (SDK `completed` event), both as epoch time from
 *   `performance.timeOrigin + performance.now()` on this machine. It includes the create request and
 *   the acknowledgement's trip back, so it overstates the coordinator's part a little. (No SSE
 *   subscriber: streaming every event to the bench would itself load the coordinator.)
 * The first second is a warm-up and is not counted.
 */
import { spawnJsonChild, stopJsonChild } from './child.js';
import { startCoordinator } from './coordinator-process.js';
import { HttpClient } from './http-client.js';
import { monotonicUs, type ProfileWindow } from './profile-summary.js';
import { round, roundSummary, summarize } from './stats.js';
import { listAll, sleep } from './tasks.js';
import type { WorkerProcessConfig } from './worker-process.js';
import { attachProfile, type Metric, type WorkloadContext, type WorkloadResult } from './workload.js';

const RATE_PER_S = 500;
const CONCURRENCY = 16;

function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

export async function latency(ctx: WorkloadContext): Promise<WorkloadResult> {
  const type = 'bench.latency';
  const warmupMs = ctx.quick ? 500 : 1000;
  const measureMs = ctx.quick ? 2000 : 10_000;
  const intervalMs = 1000 / RATE_PER_S;
  const warmupCount = Math.round(warmupMs / intervalMs);
  const total = warmupCount + Math.round(measureMs / intervalMs);
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = {
    ratePerS: RATE_PER_S,
    warmupMs,
    measureMs,
    tasks: total - warmupCount,
  };
  const result: WorkloadResult = { workload: 'latency', store: ctx.store.name, metrics, details };

  const windows: Record<string, ProfileWindow> = {};
  const coord = await startCoordinator({ store: ctx.store, cpuProfileDir: ctx.cpuProfileDir });
  const http = new HttpClient({ url: coord.url, token: coord.adminToken, maxSockets: 16 });
  const sentAt = new Float64Array(total);
  const responseAt = new Float64Array(total);
  const completedAt = new Float64Array(total);
  try {
    const config: WorkerProcessConfig = {
      url: coord.url,
      token: coord.agentToken,
      agentType: 'bench-latency',
      taskTypes: [type],
      concurrency: CONCURRENCY,
      mode: ctx.workerMode,
      recordCompletions: true,
      reportIntervalMs: 100,
    };
    const worker = spawnJsonChild('worker-process', config);
    let seen = 0;
    worker.onMessage((m) => {
      if (m.type !== 'done') return;
      for (const [i, at] of m.times as [number, number][]) {
        if (i >= 0 && i < total && completedAt[i] === 0) {
          completedAt[i] = at;
          seen++;
        }
      }
    });
    try {
      await worker.waitFor((m) => m.type === 'ready', 30_000);
      await sleep(300); // let the worker's long-poll claims arrive at the coordinator

      ctx.log(`latency: ${total} tasks at ${RATE_PER_S}/s (${warmupMs} ms warm-up + ${measureMs} ms)`);
      const errors: string[] = [];
      const pending: Promise<void>[] = [];
      let maxScheduleLagMs = 0;
      const fromUs = monotonicUs();
      const t0 = performance.now() + 10;
      let i = 0;
      while (i < total) {
        const now = performance.now();
        while (i < total && t0 + i * intervalMs <= now) {
          const k = i++;
          maxScheduleLagMs = Math.max(maxScheduleLagMs, now - (t0 + k * intervalMs));
          sentAt[k] = epochMs();
          pending.push(
            http.post('/v1/tasks', { type, payload: { i: k } }, { parse: false }).then(
              () => {
                responseAt[k] = epochMs();
              },
              (err: unknown) => {
                errors.push(String(err));
              },
            ),
          );
        }
        if (i < total) await sleep(Math.max(0, t0 + i * intervalMs - performance.now()));
      }
      const sendSpanMs = performance.now() - t0;
      await Promise.all(pending);
      if (errors.length > 0) throw new Error(`${errors.length} creates failed, first: ${errors[0]}`);
      const deadline = Date.now() + 30_000;
      while (seen < total) {
        if (Date.now() > deadline)
          throw new Error(`only ${seen} of ${total} completions reported after 30 s`);
        await sleep(20);
      }
      windows['measured phase'] = { fromUs, toUs: monotonicUs() };
      details.achievedRatePerS = round((total * 1000) / sendSpanMs);
      details.maxScheduleLagMs = round(maxScheduleLagMs);

      const tasks = await listAll(http, { type, statuses: ['completed'] });
      const serverMs: number[] = [];
      for (const t of tasks) {
        const k = (t.payload as { i?: number } | null)?.i;
        if (typeof k !== 'number' || k < warmupCount || t.finishedAt === null) continue;
        serverMs.push(t.finishedAt - t.createdAt);
      }
      const clientMs: number[] = [];
      const createRttMs: number[] = [];
      for (let k = warmupCount; k < total; k++) {
        clientMs.push(completedAt[k]! - sentAt[k]!);
        createRttMs.push(responseAt[k]! - sentAt[k]!);
      }
      const server = summarize(serverMs);
      const client = summarize(clientMs);
      details.coordinatorClockMs = roundSummary(server);
      details.clientClockMs = roundSummary(client);
      details.createRequestMs = roundSummary(summarize(createRttMs));

      // The targets judge the task's own timestamps (see above); the client clock is reported beside.
      for (const [label, s, judged] of [
        ['created→completed (coordinator clock)', server, true],
        ['sent→completion acked (client clock)', client, false],
      ] as const) {
        const p50Target = judged ? ctx.store.targets.latencyP50Ms : undefined;
        const p99Target = judged ? ctx.store.targets.latencyP99Ms : undefined;
        metrics.push({
          workload: 'latency',
          metric: `${label} p50`,
          value: s.p50,
          unit: 'ms',
          ...(p50Target ? { target: { op: '<=' as const, value: p50Target } } : {}),
        });
        metrics.push({ workload: 'latency', metric: `${label} p90`, value: s.p90, unit: 'ms' });
        metrics.push({
          workload: 'latency',
          metric: `${label} p99`,
          value: s.p99,
          unit: 'ms',
          ...(p99Target ? { target: { op: '<=' as const, value: p99Target } } : {}),
        });
        metrics.push({ workload: 'latency', metric: `${label} max`, value: s.max, unit: 'ms' });
      }
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
