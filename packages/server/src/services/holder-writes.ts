/**
 * Writes by a task's holder (docs/protocol.md "Task writes by the holder"): start, heartbeat, checkpoint,
 * logs, result upload, complete, fail. Every one carries `version`; the store checks it and the
 * holder atomically. An admin token acts as the task's current holder.
 */
import { randomBytes } from 'node:crypto';
import {
  type AppendLogsRequest,
  type CheckpointRequest,
  type ClaimCompletion,
  type CompleteTaskRequest,
  type FailTaskRequest,
  type Json,
  MAX_INLINE_RESULT_BYTES,
  type ResultRef,
  type Task,
  type TaskHeartbeatRequest,
  type WriteOutcome,
} from '@rouse/protocol';
import { InvalidTransitionError, NotFoundError, RouseError, StaleVersionError } from '../core/errors.js';
import { HELD_STATUSES } from '../core/transitions.js';
import { blobKey } from '../store/blobs.js';
import type { ClaimInput, CompleteInput, Outcome, Transitioned } from '../store/store.js';
import { requireTaskWriter } from './auth.js';
import type { Caller } from './coordinator.js';
import { type CoordinatorContext, outcomeError } from './coordinator-context.js';
import { recordBeats } from './task-heartbeats.js';

/** The agent id to write as: the caller's own, or (admin) the task's current holder. */
async function writerFor(
  ctx: CoordinatorContext,
  caller: Caller,
  taskId: string,
  action: string,
): Promise<string> {
  const agentId = requireTaskWriter(caller, action);
  if (agentId !== null) return agentId;
  const task = await ctx.store.getTask(taskId);
  if (task === null) throw new NotFoundError('task', taskId);
  if (task.agentId === null) {
    throw new RouseError(
      'invalid_transition',
      `task ${taskId} is not held by any agent (it is ${task.status}); nothing to ${action}`,
      {
        taskId,
        from: task.status,
      },
    );
  }
  return task.agentId;
}

/** Inline results above 64 KiB must go through `PUT /result`. Returns an error or null. */
export function inlineResultError(taskId: string, result: Json | undefined): RouseError | null {
  if (result === undefined || result === null) return null;
  const bytes = Buffer.byteLength(JSON.stringify(result));
  if (bytes <= MAX_INLINE_RESULT_BYTES) return null;
  return new RouseError(
    'payload_too_large',
    `the inline result of task ${taskId} is ${bytes} bytes, over the ${MAX_INLINE_RESULT_BYTES}-byte limit; upload it with PUT /v1/tasks/${taskId}/result?version=N, then complete without a result`,
    { limitBytes: MAX_INLINE_RESULT_BYTES, sizeBytes: bytes },
  );
}

/**
 * Complete several held tasks in one store write; one outcome per item, in order. With `claim`, the
 * claim is made in the same store transaction when the store offers it (`completeAndClaim`, shared
 * with the other requests of the turn: write-batcher.ts), and
 * `claimed` holds its result (effects not applied yet); otherwise `claimed` is undefined.
 */
export async function completeMany(
  ctx: CoordinatorContext,
  agentId: string,
  items: readonly ClaimCompletion[],
  claim?: ClaimInput,
): Promise<{ completed: WriteOutcome[]; claimed?: Transitioned[] }> {
  const out: (WriteOutcome | undefined)[] = new Array(items.length);
  const valid: CompleteInput[] = [];
  const index: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const c = items[i]!;
    const tooLarge = inlineResultError(c.taskId, c.result);
    if (tooLarge !== null) out[i] = { taskId: c.taskId, ok: false, code: tooLarge.code };
    else {
      valid.push({ taskId: c.taskId, agentId, version: c.version, result: c.result });
      index.push(i);
    }
  }
  let outcomes: Outcome<Transitioned>[] = [];
  let claimed: Transitioned[] | undefined;
  if (claim !== undefined && ctx.store.completeAndClaim !== undefined) {
    ({ completed: outcomes, claimed } = await ctx.writes.completeAndClaim(valid, claim));
  } else if (valid.length > 0) outcomes = await ctx.store.completeTasks(valid);
  for (let j = 0; j < index.length; j++) {
    const o = outcomes[j];
    const taskId = valid[j]!.taskId;
    if (o?.ok) {
      ctx.applyTransition(o.value);
      out[index[j]!] = { taskId, ok: true };
    } else out[index[j]!] = { taskId, ok: false, code: o?.code ?? 'internal' };
  }
  const completed = out as WriteOutcome[];
  return claimed === undefined ? { completed } : { completed, claimed };
}

export async function startTask(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  version: number,
): Promise<Task> {
  const agentId = await writerFor(ctx, caller, id, 'start');
  const t = await ctx.store.startTask({ taskId: id, agentId, version });
  ctx.applyTransition(t);
  return t.task;
}

export async function heartbeatTask(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  req: TaskHeartbeatRequest,
): Promise<WriteOutcome> {
  const agentId = await writerFor(ctx, caller, id, 'heartbeat');
  const {
    outcomes: [outcome],
  } = await recordBeats(ctx, agentId, [{ taskId: id, ...req }]);
  // Request-level failures are errors (404/403); lease-level ones are the outcome the SDK acts on.
  if (outcome === undefined) throw new RouseError('internal', 'the store returned no heartbeat outcome');
  if (!outcome.ok && outcome.code === 'not_found') throw new NotFoundError('task', id);
  if (!outcome.ok && outcome.code === 'forbidden') {
    throw new RouseError('forbidden', `agent ${agentId} does not hold task ${id}`, { taskId: id, agentId });
  }
  return outcome;
}

export async function checkpointTask(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  req: CheckpointRequest,
): Promise<void> {
  const agentId = await writerFor(ctx, caller, id, 'checkpoint');
  await ctx.store.saveCheckpoint({
    taskId: id,
    agentId,
    version: req.version,
    state: req.state,
    session: req.session,
  });
}

export async function appendLogs(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  req: AppendLogsRequest,
): Promise<{ accepted: number; truncated: boolean }> {
  const agentId = await writerFor(ctx, caller, id, 'append logs');
  const r = await ctx.store.appendLogs({
    taskId: id,
    agentId,
    version: req.version,
    lines: req.lines.map((l) => ({ stream: l.stream ?? 'stdout', text: l.text })),
    maxBytesPerTask: ctx.options.maxLogBytesPerTask,
  });
  if (r.accepted > 0) ctx.logWatchers.notify(id);
  return r;
}

export async function uploadResult(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  version: number,
  contentType: string,
  body: NodeJS.ReadableStream | Buffer,
): Promise<ResultRef> {
  const agentId = await writerFor(ctx, caller, id, 'upload a result');
  // Check before streaming bytes to disk; the store re-checks atomically when recording the ref.
  const task = await ctx.store.getTask(id);
  if (task === null) throw new NotFoundError('task', id);
  if (task.version !== version) throw new StaleVersionError(id, version, task.version, task.status);
  if (task.agentId !== agentId)
    throw new RouseError('forbidden', `agent ${agentId} does not hold task ${id}`, { taskId: id, agentId });
  if (!HELD_STATUSES.includes(task.status)) {
    throw new InvalidTransitionError(
      id,
      task.status,
      'running',
      'a result can only be uploaded while the task is held',
    );
  }
  // A key of its own per upload: a repeated upload (an SDK retry, a spooled report) never overwrites
  // or deletes a blob the task already refers to.
  const key = blobKey(id, version, randomBytes(6).toString('hex'));
  const ref = await ctx.blobs.put(key, contentType, body);
  try {
    await ctx.store.setResultRef({ taskId: id, agentId, version, resultRef: ref });
  } catch (err) {
    await ctx.blobs.remove(key);
    throw err;
  }
  // The ref replaced an earlier upload of this attempt: that blob is no longer referenced.
  if (task.resultRef !== null && task.resultRef.key !== key) await ctx.blobs.remove(task.resultRef.key);
  return ref;
}

export async function completeTask(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  req: CompleteTaskRequest,
): Promise<Task> {
  const tooLarge = inlineResultError(id, req.result);
  if (tooLarge !== null) throw tooLarge;
  const agentId = await writerFor(ctx, caller, id, 'complete');
  // Shares its store write with the other completions of this event-loop turn.
  const o = await ctx.writes.completeTask({ taskId: id, agentId, version: req.version, result: req.result });
  if (!o.ok) throw outcomeError(o);
  ctx.applyTransition(o.value);
  return o.value.task;
}

export async function failTask(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  req: FailTaskRequest,
): Promise<Task> {
  const agentId = await writerFor(ctx, caller, id, 'fail');
  const { code, message, retryable, details } = req.error;
  const t = await ctx.store.failTask({
    taskId: id,
    agentId,
    version: req.version,
    error: { code, message, retryable: retryable ?? true, ...(details ? { details } : {}) },
    backoff: ctx.options.backoff,
  });
  ctx.applyTransition(t);
  return t.task;
}
