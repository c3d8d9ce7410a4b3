/** Shared human renderings of tasks and agents. */
import type { Agent, Task } from '@rouse/protocol';
import { heartbeatLateness } from '../../core/diagnosis.js';
import { formatDuration, formatRelative } from './time.js';

/** "2/4" */
export function formatAttempts(task: Task): string {
  return `${task.attempt}/${task.maxAttempts}`;
}

/**
 * "40% tests" / "tests" / "-". A completed task is done whatever its agent last reported: "done",
 * with the last report after it when it said less than 100 % ("done (last 40% tests)").
 */
export function formatProgress(task: Pick<Task, 'progress' | 'phase' | 'status'>): string {
  const reported = formatReported(task);
  if (task.status !== 'completed') return reported;
  return reported === '-' || task.progress === 1 ? 'done' : `done (last ${reported})`;
}

function formatReported(task: Pick<Task, 'progress' | 'phase'>): string {
  const parts: string[] = [];
  if (task.progress !== null && task.progress !== undefined)
    parts.push(`${Math.round(task.progress * 100)}%`);
  if (task.phase) parts.push(task.phase);
  return parts.length ? parts.join(' ') : '-';
}

/** A short note on what the task is waiting for or how it ended. */
export function taskNote(task: Task, now: number): string {
  switch (task.status) {
    case 'created':
      return task.runAt > now ? `runs ${formatRelative(task.runAt, now)}` : 'waiting for an agent';
    case 'claimed':
      return `claimed ${formatRelative(task.claimedAt, now)}, not started`;
    case 'running': {
      if (task.executionDone) return 'execution done, awaiting write-back';
      // Late as `rouse why` says it.
      const { lastBeat, lateByMs } = heartbeatLateness(task, now);
      if (lateByMs !== null) return `heartbeat late by ${formatDuration(lateByMs)}`;
      return task.lastHeartbeatAt
        ? `heartbeat ${formatRelative(task.lastHeartbeatAt, now)}`
        : `started ${formatRelative(lastBeat, now)}`;
    }
    case 'failed':
    case 'timeout': {
      const why = task.error ? `${task.error.code}` : task.status;
      if (task.final) return `${why}; final`;
      return task.nextAttemptAt && task.nextAttemptAt > now
        ? `${why}; retry ${formatRelative(task.nextAttemptAt, now)}`
        : `${why}; retry due`;
    }
    case 'completed':
      return task.finishedAt && task.startedAt
        ? `took ${formatDuration(task.finishedAt - task.startedAt)}`
        : 'completed';
    case 'cancelled':
      return task.error?.message ? `cancelled: ${task.error.message}` : 'cancelled';
    default:
      return '';
  }
}

/** "agt_01J…" or "name (agt_…)" when the name is known. */
export function agentLabel(agentId: string | null, names?: ReadonlyMap<string, string>): string {
  if (!agentId) return '-';
  const name = names?.get(agentId);
  return name ? name : agentId;
}

/** The agent a transition's actor names (`agent:<id>`), or the actor itself. */
export function actorLabel(actor: string, names?: ReadonlyMap<string, string>): string {
  if (actor.startsWith('agent:')) return agentLabel(actor.slice(6), names);
  return actor;
}

export function agentTaskCount(agent: Agent): number {
  return agent.currentTaskIds.length;
}

/** Compact one-line JSON, cut to `max` characters. */
export function compactJson(value: unknown, max = 80): string {
  let s: string;
  try {
    s = JSON.stringify(value) ?? 'null';
  } catch {
    s = String(value);
  }
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
