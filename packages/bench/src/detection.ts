/**
 * Detection: a worker process holding one task (heartbeat every 500 ms, timeout 1,500 ms) is
 * SIGKILLed right after a heartbeat was acknowledged. We measure, on the coordinator's clock, the
 * time from the task's last heartbeat to its `timeout` transition (the `at` of that history entry)
 * and report the excess over `heartbeatTimeoutMs`. 20 runs, a few at a time.
 *
 * The last heartbeat is the later of the task's stored `lastHeartbeatAt` and the last acknowledged
 * lease (`leaseExpiresAt - heartbeatTimeoutMs`), so a heartbeat write the coordinator coalesced and
 * had not flushed yet does not inflate the result.
 */
import { randomInt } from 'node:crypto';
import type { CreateTaskResponse, TaskEvent, TaskResponse } from '@rouse/protocol';
import { spawnJsonChild } from './child.js';
import { startCoordinator } from './coordinator-process.js';
import type { DetectionAgentConfig } from './detection-agent.js';
import { HttpClient } from './http-client.js';
import { round, roundSummary, summarize } from './stats.js';
import { runConcurrent, sleep } from './tasks.js';
import type { Metric, WorkloadContext, WorkloadResult } from './workload.js';

const HEARTBEAT_INTERVAL_MS = 500;
const HEARTBEAT_TIMEOUT_MS = 1500;
const PARALLEL = 4;

interface Run {
  run: number;
  taskId: string;
  heartbeatTimeoutMs: number;
  lastHeartbeatAt: number;
  timeoutAt: number;
  excessMs: number;
  /** `lastHeartbeatAt` as stored on the task (null if never written). */
  storedLastHeartbeatAt: number | null;
  /** `leaseExpiresAt - heartbeatTimeoutMs` of the last acknowledged heartbeat. */
  ackedHeartbeatAt: number | null;
}

export async function detection(ctx: WorkloadContext): Promise<WorkloadResult> {
  const runs = ctx.quick ? 4 : 20;
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = {
    runs,
    heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
    parallel: PARALLEL,
  };
  const result: WorkloadResult = { workload: 'detection', store: ctx.store.name, metrics, details };
  const coord = await startCoordinator({ store: ctx.store, cpuProfileDir: ctx.cpuProfileDir });
  const http = new HttpClient({ url: coord.url, token: coord.adminToken, maxSockets: 8 });
  const done: Run[] = [];
  try {
    ctx.log(`detection: ${runs} SIGKILLed agents, ${PARALLEL} at a time`);
    await runConcurrent(runs, PARALLEL, async (run) => {
      // Stagger the lanes so the kills do not line up.
      if (run < PARALLEL) await sleep(run * 150);
      done.push(await oneRun(ctx, coord.url, coord.agentToken, http, run));
    });
  } finally {
    http.close();
    await coord.stop();
  }
  done.sort((a, b) => a.run - b.run);
  details.runsDetail = done;
  const excess = summarize(done.map((r) => r.excessMs));
  details.excessMs = roundSummary(excess);
  const disagreements = done.filter(
    (r) =>
      r.storedLastHeartbeatAt !== null &&
      r.ackedHeartbeatAt !== null &&
      r.storedLastHeartbeatAt !== r.ackedHeartbeatAt,
  );
  details.storedVsAckedHeartbeatMismatches = disagreements.length;
  const label = `timeout − last heartbeat − ${HEARTBEAT_TIMEOUT_MS} ms`;
  metrics.push({ workload: 'detection', metric: `${label} p50`, value: excess.p50, unit: 'ms' });
  metrics.push({
    workload: 'detection',
    metric: `${label} p99 (${runs} runs)`,
    value: excess.p99,
    unit: 'ms',
    target: { op: '<=', value: 250 },
    peer: 'polled: + scan interval',
  });
  metrics.push({ workload: 'detection', metric: `${label} max`, value: excess.max, unit: 'ms' });
  return result;
}

async function oneRun(
  ctx: WorkloadContext,
  url: string,
  agentToken: string,
  http: HttpClient,
  run: number,
): Promise<Run> {
  const type = `bench.detect.${run}`;
  const created = await http.post<CreateTaskResponse>('/v1/tasks', {
    type,
    payload: { run },
    maxAttempts: 1,
    timing: { heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS },
  });
  const taskId = created.task.id;
  const heartbeatTimeoutMs = created.task.timing.heartbeatTimeoutMs;
  const config: DetectionAgentConfig = {
    url,
    token: agentToken,
    taskType: type,
    heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
  };
  const agent = spawnJsonChild('detection-agent', config);
  let ackedHeartbeatAt: number | null = null;
  try {
    // Two acknowledged heartbeats, then kill between beats (varied so the kill phase is not fixed).
    const beat = await agent.waitFor(
      (m) => m.type === 'beat' && (m.n as number) >= 2 && m.ok === true,
      30_000,
    );
    await sleep(randomInt(10, 300));
    agent.kill('SIGKILL');
    await agent.exited;
    const beats = agent.messages.filter((m) => m.type === 'beat' && m.ok === true);
    const last = beats[beats.length - 1] ?? beat;
    if (typeof last.leaseExpiresAt === 'number') ackedHeartbeatAt = last.leaseExpiresAt - heartbeatTimeoutMs;
  } finally {
    agent.kill('SIGKILL');
  }

  const deadline = Date.now() + heartbeatTimeoutMs + 10_000;
  let timeoutEvent: TaskEvent | undefined;
  while (!timeoutEvent) {
    if (Date.now() > deadline)
      throw new Error(`task ${taskId} did not time out within ${heartbeatTimeoutMs + 10_000} ms`);
    await sleep(50);
    const res = await http.get<{ events: TaskEvent[] }>(`/v1/tasks/${taskId}/events`);
    timeoutEvent = res.events.find((e) => e.to === 'timeout');
  }
  const { task } = await http.get<TaskResponse>(`/v1/tasks/${taskId}`);
  const storedLastHeartbeatAt = task.lastHeartbeatAt;
  const lastHeartbeatAt = Math.max(storedLastHeartbeatAt ?? -Infinity, ackedHeartbeatAt ?? -Infinity);
  if (!Number.isFinite(lastHeartbeatAt)) throw new Error(`task ${taskId}: no heartbeat time known`);
  const excessMs = timeoutEvent.at - lastHeartbeatAt - heartbeatTimeoutMs;
  ctx.log(`detection: run ${run + 1}: excess ${round(excessMs)} ms`);
  return {
    run,
    taskId,
    heartbeatTimeoutMs,
    lastHeartbeatAt,
    timeoutAt: timeoutEvent.at,
    excessMs,
    storedLastHeartbeatAt,
    ackedHeartbeatAt,
  };
}
