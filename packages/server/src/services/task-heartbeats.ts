/**
 * Task heartbeats, batched (docs/design.md §3, §5): the beats of every request of one event-loop turn go
 * to the store as one write that renews every lease in it (write-batcher.ts); each
 * accepted beat moves the in-memory lease deadline; progress changes restart the stall clock and go
 * out as `task.progress`. A beat for a task that was cancelled answers `cancelled` and queues a
 * `cancel` command, so the holder's AbortSignal fires with the right reason.
 */
import type { TaskBeat, WriteOutcome } from '@rouse/protocol';
import type { CoordinatorContext } from './coordinator-context.js';
import type { HeldTask } from './watchdog/agent-watchdog.js';

/**
 * Record the beats; returns one outcome per beat, and the running tasks they renewed as the
 * watchdog's stall and dependency detectors see them.
 */
export async function recordBeats(
  ctx: CoordinatorContext,
  agentId: string,
  beats: readonly TaskBeat[],
): Promise<{ outcomes: WriteOutcome[]; held: HeldTask[] }> {
  const { writeBackGraceMs } = ctx.options;
  // Written with every other task heartbeat of this turn (other agents' included): one statement.
  const outcomes = await Promise.all(
    beats.map((b) =>
      ctx.writes.taskHeartbeat({
        taskId: b.taskId,
        agentId,
        version: b.version,
        progress: b.progress,
        phase: b.phase,
        executionDone: b.executionDone,
        writeBackGraceMs,
      }),
    ),
  );
  const now = ctx.clock.now();
  const out: WriteOutcome[] = new Array(beats.length);
  const held: HeldTask[] = [];
  for (let i = 0; i < beats.length; i++) {
    const beat = beats[i]!;
    const o = outcomes[i];
    if (o === undefined) {
      out[i] = { taskId: beat.taskId, ok: false, code: 'internal' };
      continue;
    }
    if (!o.ok) {
      out[i] = { taskId: beat.taskId, ok: false, code: o.code };
      // The holder of a cancelled task learns it here too (the store refuses the beat from `cancelled`).
      if (o.code === 'invalid_transition' && o.details?.from === 'cancelled') {
        out[i] = { taskId: beat.taskId, ok: false, code: 'cancelled' };
        await ctx.commands.enqueue(agentId, {
          type: 'cancel',
          taskId: beat.taskId,
          reason: 'the task was cancelled',
        });
      }
      continue;
    }
    const v = o.value;
    if (v.status === 'running') {
      held.push({
        taskId: beat.taskId,
        progress: beat.progress ?? null,
        phase: beat.phase ?? null,
        progressChangedAt: v.progressChangedAt,
        stallTimeoutMs: v.stallTimeoutMs,
        requires: v.requires,
      });
    }
    ctx.leases.track(
      beat.taskId,
      beat.version,
      v.leaseExpiresAt,
      beat.executionDone === true ? true : undefined,
    );
    if (v.progressed) {
      ctx.eventRelay.relayProgress(beat.taskId);
      if (ctx.bus.active) {
        ctx.bus.publish({
          type: 'task.progress',
          at: now,
          taskId: beat.taskId,
          progress: beat.progress ?? null,
          phase: beat.phase ?? null,
        });
      }
    }
    out[i] = { taskId: beat.taskId, ok: true, leaseExpiresAt: v.leaseExpiresAt };
  }
  return { outcomes: out, held };
}
