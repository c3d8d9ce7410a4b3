/**
 * The worker's typed events. Listen with `worker.on('completed', ({ task }) => ...)`; wait for one
 * with `worker.once`: `await new Promise<void>((resolve) => worker.once('stopped', () => resolve()))`.
 * Not with `once(worker, 'stopped')` from `node:events`: it rejects on the first `error` event, and
 * `error` events are informational (the worker emits them for problems it handled itself). Listeners
 * that throw are logged, never thrown into the runtime.
 */
import type {
  Agent,
  AgentCommand,
  AgentHeartbeatRequest,
  AgentHeartbeatResponse,
  Json,
  Task,
  TaskError,
} from '@rouse/protocol';
import type { RuntimeErrorEvent } from '../runtime/safe-emit.js';

/** What happened to a spooled report when the worker delivered it. */
export type SpoolOutcome = 'delivered' | 'superseded' | 'rejected';

export interface WorkerEvents {
  /** Registered with the coordinator; the worker now acts as `agent.id`. */
  registered: [{ agent: Agent; heartbeatIntervalMs: number }];
  /** A task was claimed (and started) and its handler is about to run. */
  claimed: [{ task: Task }];
  /** The coordinator accepted the task's completion. */
  completed: [{ task: Task; result: Json | undefined }];
  /** The coordinator accepted the task's failure (it is retried if retryable and attempts are left). */
  failed: [{ task: Task; error: TaskError }];
  /** The lease is gone (`code`: stale_version, not_found, forbidden, ...): signal aborted, result dropped. */
  leaseLost: [{ task: Task; code: string }];
  /** A cancelled task: its signal aborted with `TaskCancelledError`, nothing is reported for it. */
  cancelled: [{ task: Task; reason: string | undefined }];
  /** Something went wrong that the runtime handles itself (retry, spool, backoff); for logs and metrics. */
  error: [RuntimeErrorEvent];
  /** The connection to the coordinator was lost (a request failed at the network level); claims are interrupted. */
  disconnected: [{ error: unknown }];
  /** It is back after `downMs`; claiming resumes at once. */
  reconnected: [{ downMs: number }];
  /** An agent heartbeat was answered. */
  heartbeat: [{ request: AgentHeartbeatRequest; response: AgentHeartbeatResponse }];
  /** A command arrived with a heartbeat answer (after the runtime acted on it). */
  command: [{ command: AgentCommand }];
  /** A report could not be delivered (the coordinator is unreachable) and was written to the spool. */
  spooled: [{ taskId: string; version: number; kind: 'complete' | 'fail' }];
  /** A report from the spool reached the coordinator (or turned out to be superseded / refused). */
  spoolDelivered: [{ taskId: string; outcome: SpoolOutcome; code?: string }];
  /** `stop()` finished: handlers done or aborted, reports sent or spooled, agent left. */
  stopped: [];
}

/** Emit one of the worker's events (the runtime's parts get the worker's safe emit as this). */
export type Emit = <K extends keyof WorkerEvents>(event: K, ...args: WorkerEvents[K]) => void;
