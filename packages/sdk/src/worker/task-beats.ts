/** A worker's agent heartbeat: its status, process metrics, budget reports, one beat per attempt it holds. */
import {
  type AgentHeartbeatRequest,
  type AgentMetrics,
  MAX_BUDGET_REPORTS,
  type TaskBeat,
  type TaskBudgetReport,
} from '@rouse/protocol';
import type { TaskRun } from './task-run.js';

/**
 * The task beats of the next agent heartbeat: progress and phase as last reported, `executionDone`
 * once the handler ended (or said so). Marks each run's progress as sent.
 */
export function taskBeats(runs: Iterable<TaskRun>): TaskBeat[] {
  const out: TaskBeat[] = [];
  for (const run of runs) {
    const beat: TaskBeat = { taskId: run.task.id, version: run.version };
    if (run.progressValue !== undefined) beat.progress = run.progressValue;
    if (run.phase !== undefined) beat.phase = run.phase;
    run.progressDirty = false;
    if (run.done || run.state !== 'running') beat.executionDone = true;
    out.push(beat);
  }
  return out;
}

/**
 * The budget reports of the next agent heartbeat (`metrics.budgets`): the last report of every held
 * attempt that made one, at most `max`. Marks them as sent.
 */
export function budgetReports(runs: Iterable<TaskRun>, max: number): TaskBudgetReport[] {
  const out: TaskBudgetReport[] = [];
  for (const run of runs) {
    if (run.budget === undefined) continue;
    run.budgetDirty = false;
    if (out.length < max) out.push({ taskId: run.task.id, ...run.budget });
  }
  return out;
}

/** The shortest heartbeat interval among held tasks (Infinity when none). */
export function minTaskIntervalMs(runs: Iterable<TaskRun>): number {
  let min = Number.POSITIVE_INFINITY;
  for (const run of runs) min = Math.min(min, run.task.timing.heartbeatIntervalMs);
  return min;
}

/**
 * The worker's agent heartbeat, before dependency reports and command acks: `running` while it holds
 * tasks (else `idle`), the process `metrics` with the failed-heartbeat count and budget reports, and
 * the task beats. Marks what it carries as sent.
 */
export function workerHeartbeat(
  held: ReadonlyMap<string, TaskRun>,
  metrics: AgentMetrics,
  heartbeatFailures: number,
): AgentHeartbeatRequest {
  const tasks = taskBeats(held.values());
  if (heartbeatFailures > 0) metrics.heartbeatFailures = heartbeatFailures;
  const budgets = budgetReports(held.values(), MAX_BUDGET_REPORTS);
  if (budgets.length > 0) metrics.budgets = budgets;
  return { status: tasks.length > 0 ? 'running' : 'idle', metrics, tasks };
}
