/**
 * Gathers the evidence for a task's diagnosis (agents serving its type and their polls, its queue
 * position, dependency states, when its progress last changed, its last history entry) and runs the
 * pure rules of `core/diagnosis.ts`.
 */
import type { Diagnosis, Task } from '@rouse/protocol';
import { type DiagnosisAgent, diagnose } from '../core/diagnosis.js';
import type { Caller } from './coordinator.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { getTask } from './task-operations.js';

export async function diagnoseTask(ctx: CoordinatorContext, caller: Caller, id: string): Promise<Diagnosis> {
  const task = await getTask(ctx, caller, id);
  const now = ctx.clock.now();
  const [{ agents: serving }, events, queue] = await Promise.all([
    // Agents registered for the type or that polled for it last.
    ctx.store.listAgents({ taskType: task.type }),
    ctx.store.listTaskEvents(id),
    isClaimable(task, now) ? ctx.store.queueStats(id) : Promise.resolve({ ahead: 0 }),
  ]);
  const waiting = ctx.waiters.waitingAgents(task.type);
  const agents: DiagnosisAgent[] = serving.map((a) => ({
    id: a.id,
    status: a.status,
    lastHeartbeatAt: a.lastHeartbeatAt,
    startedAt: a.startedAt,
    lastPollAt: a.lastPollAt,
    currentTaskIds: a.currentTaskIds,
    waiting: waiting.has(a.id),
  }));
  return diagnose({
    task,
    now,
    agents,
    queueAhead: queue.ahead,
    dependencies: ctx.dependencies.views(),
    writeBackGraceMs: ctx.options.writeBackGraceMs,
    pollStaleAfterMs: ctx.options.pollStaleAfterMs,
    lastEvent: events[events.length - 1] ?? null,
  });
}

function isClaimable(task: Task, now: number): boolean {
  if (task.status === 'created') return task.runAt <= now;
  if (task.status === 'failed' || task.status === 'timeout')
    return task.nextAttemptAt !== null && task.nextAttemptAt <= now;
  return false;
}
