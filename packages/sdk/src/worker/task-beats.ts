/** The task part of a worker's agent heartbeat: one beat per attempt it holds. */
import type { TaskBeat, TaskBudgetReport } from '@rouse/protocol';
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
