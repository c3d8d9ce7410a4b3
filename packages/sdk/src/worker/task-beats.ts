/** The task part of a worker's agent heartbeat: one beat per attempt it holds. */
import type { TaskBeat } from '@rouse/protocol';
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

/** The shortest heartbeat interval among held tasks (Infinity when none). */
export function minTaskIntervalMs(runs: Iterable<TaskRun>): number {
  let min = Number.POSITIVE_INFINITY;
  for (const run of runs) min = Math.min(min, run.task.timing.heartbeatIntervalMs);
  return min;
}
