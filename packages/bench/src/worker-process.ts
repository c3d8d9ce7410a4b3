/**
 * Child-process entry point: ONE worker with concurrency N and a no-op handler, reporting on stdout
 * as JSON lines. Run by the throughput and latency workloads (`child.ts` spawns it).
 *
 * argv[2]: JSON `WorkerProcessConfig`. stdout messages:
 * - `{type: 'starting', at}` just before the worker starts claiming (epoch ms)
 * - `{type: 'ready', at}` once `start()` returned
 * - `{type: 'first', at}` when the handler first runs
 * - `{type: 'count', handled, completed, at}` every `reportIntervalMs` while the numbers change
 * - `{type: 'done', times: [[i, epochMs], ...]}` before it, with `recordCompletions`
 * - `{type: 'stopped', handled, completed, at}` after `stop` on stdin, then the process exits
 * `handled` counts tasks handed to the handler; `completed` counts completions the coordinator
 * acknowledged (the SDK's `completed` events, or the raw loop's claim responses).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ClaimResponse, RegisterAgentResponse, Task } from '@rouse/protocol';
import { Worker } from '@rouse/sdk';
import { HttpClient } from './http-client.js';

export interface WorkerProcessConfig {
  url: string;
  /** Enrollment (or admin) token; the worker registers itself. */
  token: string;
  agentType: string;
  taskTypes: string[];
  concurrency: number;
  /**
   * `sdk`: the SDK `Worker` (what the bench measures). `raw`: one bare claim loop that completes what
   * it holds and claims up to `concurrency` more per request (the coordinator's ceiling; diagnostics).
   */
  mode: 'sdk' | 'raw';
  /** @default 50 */
  reportIntervalMs?: number;
  /**
   * Report when each completion was acknowledged, as `[payload.i, epochMs]` pairs in `done` messages
   * (sub-ms epoch time from `performance.timeOrigin + performance.now()`). For the latency workload.
   */
  recordCompletions?: boolean;
}

interface Running {
  stop(): Promise<void>;
}

const counters = { handled: 0, completed: 0 };
/** `[payload.i, epochMs]` of acknowledged completions not reported yet (with `recordCompletions`). */
let doneTimes: number[][] = [];
let recordCompletions = false;

function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

function noteCompleted(task: Task): void {
  counters.completed++;
  if (!recordCompletions) return;
  const i = (task.payload as { i?: unknown } | null)?.i;
  if (typeof i === 'number') doneTimes.push([i, epochMs()]);
}

function emit(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function noteHandled(): void {
  if (counters.handled === 0) emit({ type: 'first', at: Date.now() });
  counters.handled++;
}

async function startSdk(config: WorkerProcessConfig): Promise<Running> {
  // A fresh spool per run, so no result of an earlier run is delivered into this one.
  const spoolDir = mkdtempSync(join(tmpdir(), 'rouse-bench-spool-'));
  const worker = new Worker({
    url: config.url,
    token: config.token,
    agentType: config.agentType,
    taskTypes: config.taskTypes,
    concurrency: config.concurrency,
    spoolDir,
    shutdownSignals: false,
    handler: async () => {
      noteHandled();
      return null;
    },
  });
  worker.on('completed', ({ task }) => noteCompleted(task));
  emit({ type: 'starting', at: Date.now() });
  await worker.start();
  return {
    async stop() {
      await worker.stop();
      rmSync(spoolDir, { recursive: true, force: true });
    },
  };
}

async function startRaw(config: WorkerProcessConfig): Promise<Running> {
  const enroll = new HttpClient({ url: config.url, token: config.token, maxSockets: 1 });
  const reg = await enroll.post<RegisterAgentResponse>('/v1/agents', {
    agentType: config.agentType,
    taskTypes: config.taskTypes,
    pid: process.pid,
  });
  enroll.close();
  const http = new HttpClient({ url: config.url, token: reg.token, maxSockets: 2 });
  const claimPath = `/v1/agents/${reg.agent.id}/claim`;
  let stopping = false;
  emit({ type: 'starting', at: Date.now() });

  // One request in flight: complete everything held and claim up to `concurrency` more, with start.
  // The protocol's best case for the coordinator; the SDK worker should come close to it.
  const loop = async (): Promise<void> => {
    let held: Task[] = [];
    while (!stopping) {
      const body: Record<string, unknown> = {
        types: config.taskTypes,
        max: config.concurrency,
        waitMs: held.length > 0 ? 0 : 1000,
        start: true,
      };
      if (held.length > 0)
        body.complete = held.map((t) => ({ taskId: t.id, version: t.version, result: null }));
      const res = await http.post<ClaimResponse>(claimPath, body);
      const outcomes = res.completed ?? [];
      held.forEach((t, k) => {
        if (outcomes[k]?.ok) noteCompleted(t);
      });
      held = res.tasks;
      for (let k = 0; k < held.length; k++) noteHandled();
    }
    for (const t of held) {
      await http.post(`/v1/tasks/${t.id}/complete`, { version: t.version, result: null });
      noteCompleted(t);
    }
  };
  const loops = [loop()];
  return {
    async stop() {
      stopping = true;
      await Promise.allSettled(loops);
      http.close();
    },
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerProcessConfig;
  recordCompletions = config.recordCompletions ?? false;
  const running = config.mode === 'raw' ? await startRaw(config) : await startSdk(config);
  emit({ type: 'ready', at: Date.now() });

  let last = -1;
  const report = (): void => {
    if (doneTimes.length > 0) {
      emit({ type: 'done', times: doneTimes });
      doneTimes = [];
    }
    const completed = counters.completed;
    if (completed === last) return;
    last = completed;
    emit({ type: 'count', handled: counters.handled, completed, at: Date.now() });
  };
  const timer = setInterval(report, config.reportIntervalMs ?? 50);

  createInterface({ input: process.stdin }).on('line', (line) => {
    const command = line.trim();
    if (command === 'report') {
      last = -1;
      report();
    } else if (command === 'stop') {
      clearInterval(timer);
      running.stop().then(
        () => {
          last = -1;
          report();
          emit({ type: 'stopped', handled: counters.handled, completed: counters.completed, at: Date.now() });
          process.exit(0);
        },
        (err: unknown) => {
          process.stderr.write(`worker-process: stop failed: ${String(err)}\n`);
          process.exit(1);
        },
      );
    }
  });
}

main().catch((err: unknown) => {
  process.stderr.write(
    `worker-process: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
