/**
 * `@rouse/sdk` — what an agent installs to work with a Rouse coordinator:
 * - {@link Client}: the typed HTTP client, one method per endpoint;
 * - {@link Worker}: the worker runtime (claim loop, heartbeats, checkpoints, logs, spool, shutdown);
 * - {@link monitor} / {@link Monitor}, {@link monitored}, {@link trackIteration}: monitor mode, the
 *   watchdog's heartbeats for agents that are not task workers;
 * - {@link CommandAnswers}: an agent's answers to the coordinator's commands, sent at once, for
 *   runtimes of their own (the agent host's supervisor uses it);
 * - the errors a handler throws or sees ({@link NonRetryableError}, {@link LeaseLostError}, ...);
 * - the protocol's types, re-exported.
 * Test helpers live in `@rouse/sdk/testing`.
 */
import type { Json } from '@rouse/protocol';
import type { TaskHandler } from './worker/task-context.js';

export * from '@rouse/protocol';
export type {
  ClientOptions,
  FetchedResult,
  ListAgentsQuery,
  ListTasksQuery,
  ResolvedClientOptions,
} from './client.js';
export { Client, resolveClientOptions } from './client.js';
export {
  ExecutionTimeoutError,
  InvalidOptionError,
  isRetryable,
  LeaseLostError,
  NonRetryableError,
  RouseApiError,
  RouseNetworkError,
  RouseSdkError,
  TaskCancelledError,
  WorkerShutdownError,
  wasNotApplied,
} from './errors.js';
export { type Logger, noopLogger } from './logger.js';
export type { MonitorEvents } from './monitor/events.js';
export { Monitor, type MonitorStatus, monitor } from './monitor/monitor.js';
export { monitored, trackIteration } from './monitor/monitored.js';
export type { MonitorOptions, ResolvedMonitorOptions } from './monitor/options.js';
export { MONITOR_DEFAULTS, resolveMonitorOptions } from './monitor/options.js';
export { backoffDelayMs, RETRY_DEFAULTS, type ResolvedRetryOptions, type RetryOptions } from './retry.js';
export type { AgentIdentityOptions } from './runtime/agent-identity.js';
export type { DependencyObservation } from './runtime/classify-dependency.js';
export {
  acksFor,
  CommandAnswers,
  type CommandAnswersOptions,
  type SendAnswers,
  sendAnswersAs,
} from './runtime/command-answers.js';
export type { DependencyReportOptions } from './runtime/dependencies.js';
export type { HeartbeatStatsView } from './runtime/heartbeat-stats.js';
export type { RuntimeErrorEvent } from './runtime/safe-emit.js';
export type { SnapshotOptions, SnapshotProvider, SnapshotSaveOptions } from './runtime/snapshots.js';
export type { FetchFn } from './transport.js';
export type { SpoolOutcome, WorkerEvents } from './worker/events.js';
export type { ResolvedWorkerOptions, WorkerOptions } from './worker/options.js';
export { resolveWorkerOptions, WORKER_DEFAULTS } from './worker/options.js';
export type { BudgetReport, OnceOptions, TaskContext, TaskHandler } from './worker/task-context.js';
export { Worker } from './worker/worker.js';

/**
 * Type a handler's payload and result without a cast; returns `fn` unchanged.
 *
 * @example
 * const review = defineHandler<{ pr: number }, { approved: boolean }>(async (task, ctx) => {
 *   ctx.log(`reviewing #${task.payload.pr}`);
 *   return { approved: true };
 * });
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler may return nothing
export function defineHandler<P extends Json = Json, R extends Json | void = Json | void>(
  fn: (task: Parameters<TaskHandler>[0] & { payload: P }, ctx: Parameters<TaskHandler>[1]) => Promise<R>,
): TaskHandler<R> {
  return fn as TaskHandler<R>;
}
