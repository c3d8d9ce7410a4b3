/**
 * Everything that follows a transition the store made, in one place so every path (claims,
 * agent writes, expiries, operator actions) behaves alike: publish the history entries, keep the
 * lease timers in step, wake claimers when the task is claimable again (now or after its backoff),
 * tell a cancelled task's holder, and wake log followers when the task ends.
 */
import type { Transitioned } from '../store/store.js';
import type { CoordinatorContext } from './coordinator-context.js';

export function applyTransition(ctx: CoordinatorContext, { task, events }: Transitioned): void {
  ctx.bus.publishTransition(task, events);
  ctx.eventRelay.relay(task.id, events);
  if (task.status === 'claimed' || task.status === 'running') {
    if (task.leaseExpiresAt !== null)
      ctx.leases.track(task.id, task.version, task.leaseExpiresAt, task.executionDone);
    return;
  }
  ctx.leases.untrack(task.id, task.version);
  if ((task.status === 'failed' || task.status === 'timeout') && task.nextAttemptAt !== null) {
    ctx.waiters.notifyAt(task.type, task.nextAttemptAt);
  }
  if (task.status === 'cancelled') {
    const from = events[events.length - 1]?.from;
    if (task.agentId !== null && (from === 'claimed' || from === 'running')) {
      const reason = events[events.length - 1]?.reason;
      ctx.commands.enqueueLater(task.agentId, {
        type: 'cancel',
        taskId: task.id,
        ...(reason ? { reason } : {}),
      });
    }
  }
  if (task.final) ctx.logWatchers.notify(task.id);
}
