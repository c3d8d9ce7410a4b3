/**
 * The task state machine (docs/design.md §2): the one table of allowed transitions. Every write in every
 * store is checked against it; nothing else can ever happen.
 */
import type { TaskStatus } from '@rouse/protocol';
import { InvalidTransitionError } from './errors.js';

export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  created: ['claimed', 'cancelled'],
  claimed: ['running', 'timeout', 'cancelled'],
  running: ['completed', 'failed', 'timeout', 'cancelled'],
  failed: ['claimed', 'cancelled'],
  timeout: ['claimed', 'cancelled'],
  completed: [],
  cancelled: [],
};

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function assertTransition(taskId: string, from: TaskStatus, to: TaskStatus): void {
  if (!canTransition(from, to)) throw new InvalidTransitionError(taskId, from, to);
}

/** The statuses from which `to` may be reached, e.g. `sourcesOf('claimed')` = created, failed, timeout. */
export function sourcesOf(to: TaskStatus): TaskStatus[] {
  return (Object.keys(TRANSITIONS) as TaskStatus[]).filter((from) => TRANSITIONS[from].includes(to));
}

/** Statuses in which an agent holds the task under a lease. */
export const HELD_STATUSES: readonly TaskStatus[] = ['claimed', 'running'];

/**
 * Whether a task is final: it will never run again by itself. `completed` and `cancelled` always are;
 * `failed` and `timeout` are when no retry is scheduled (`nextAttemptAt` is null).
 */
export function isFinal(status: TaskStatus, nextAttemptAt: number | null): boolean {
  if (status === 'completed' || status === 'cancelled') return true;
  if (status === 'failed' || status === 'timeout') return nextAttemptAt === null;
  return false;
}
