/** A real SDK worker process (`test/fixtures/worker.mjs`) whose events arrive as JSON lines. */
import { fileURLToPath } from 'node:url';
import type { CoordinatorProcess } from './coordinator-process.js';
import { type Spawned, spawnNode } from './processes.js';
import { tempDir } from './temp-dir.js';

const WORKER = fileURLToPath(new URL('../fixtures/worker.mjs', import.meta.url));

export interface WorkerLine {
  worker: string;
  pid: number;
  event: string;
  taskId?: string;
  attempt?: number;
  version?: number;
  [key: string]: unknown;
}

export interface WorkerProcess extends Spawned {
  name: string;
  /** Wait for an event line, optionally for one task. */
  waitFor(event: string, taskId?: string, timeoutMs?: number): Promise<WorkerLine>;
  events(): WorkerLine[];
}

export interface WorkerProcessOptions {
  name?: string;
  types?: string[];
  concurrency?: number;
  heartbeatMs?: number;
  waitMs?: number;
  spoolDir?: string;
  /** SDK Workers (agents) in this one process; with more than one, `allStarted` follows their `started`s. @default 1 */
  workers?: number;
  /** The agent slot's key (ROUSE_AGENT_KEY): a second process with the same key replaces the first. */
  key?: string;
  /**
   * Also print a `heartbeat` line for every heartbeat answered: `at` (the process's clock) and `acks`
   * (the ids of the commands it answered).
   */
  printHeartbeats?: boolean;
  /** The SDK's `shutdownGraceMs` (its default when unset). */
  shutdownGraceMs?: number;
}

export function startWorkerProcess(
  coord: Pick<CoordinatorProcess, 'url' | 'agentToken'>,
  options: WorkerProcessOptions = {},
): WorkerProcess {
  const name = options.name ?? `w-${Math.random().toString(36).slice(2, 8)}`;
  const child = spawnNode([WORKER], {
    ROUSE_URL: coord.url,
    ROUSE_TOKEN: coord.agentToken,
    WORKER_NAME: name,
    TASK_TYPES: (options.types ?? ['e2e']).join(','),
    CONCURRENCY: String(options.concurrency ?? 1),
    WAIT_MS: String(options.waitMs ?? 2000),
    SPOOL_DIR: options.spoolDir ?? tempDir('rouse-spool-'),
    ...(options.heartbeatMs ? { HEARTBEAT_MS: String(options.heartbeatMs) } : {}),
    ...(options.workers ? { WORKERS: String(options.workers) } : {}),
    ...(options.key ? { ROUSE_AGENT_KEY: options.key } : {}),
    ...(options.printHeartbeats ? { PRINT_HEARTBEATS: '1' } : {}),
    ...(options.shutdownGraceMs !== undefined ? { SHUTDOWN_GRACE_MS: String(options.shutdownGraceMs) } : {}),
  });
  const isLine = (m: unknown): m is WorkerLine => typeof m === 'object' && m !== null && 'event' in m;
  return {
    ...child,
    name,
    waitFor: (event, taskId, timeoutMs) =>
      child.waitForLine<WorkerLine>(
        (m) => isLine(m) && m.event === event && (taskId === undefined || m.taskId === taskId),
        timeoutMs,
      ),
    events: () =>
      child.lines
        .map((l) => {
          try {
            return JSON.parse(l) as unknown;
          } catch {
            return null;
          }
        })
        .filter(isLine),
  };
}
