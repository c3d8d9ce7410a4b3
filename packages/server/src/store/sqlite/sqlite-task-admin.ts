/**
 * Task writes made by the coordinator or an operator: create, lease expiry, completion from an
 * uploaded result, cancel, manual retry, graceful agent leave. Each runs inside the caller's write
 * transaction (see sqlite-store.ts).
 */
import type { TaskError } from '@rouse/protocol';
import { IdempotencyConflictError } from '../../core/errors.js';
import { assertTransition } from '../../core/transitions.js';
import { canonicalJson } from '../canonical-json.js';
import { shardOf } from '../lease-shards.js';
import type {
  CreatedTask,
  ExpireInput,
  ExpiryReason,
  NewTask,
  ReleaseAgentTasksInput,
  Transitioned,
} from '../store.js';
import { type AttemptedWrite, checkWrite } from '../write-errors.js';
import { agentActor, createdTask, expiryReason, nextAttemptAt, releasedTaskError } from '../write-rules.js';
import { type HeadRow, headTiming, type TaskRow, toHead, toTask } from './row-mapping.js';
import type { SqliteContext } from './sqlite-context.js';
import { TaskRows } from './task-rows.js';

const EXPIRY_MESSAGES: Record<ExpiryReason, string> = {
  claim_timeout: 'claimed but not started within claimTimeoutMs',
  heartbeat_timeout: 'no heartbeat within heartbeatTimeoutMs',
  attempt_deadline: 'the attempt ran past attemptDeadlineMs',
};

/** The task already created under `t`'s idempotency key, or null (throws when it differs from `t`). */
function deduplicated(ctx: SqliteContext, t: NewTask): CreatedTask | null {
  if (t.idempotencyKey === null) return null;
  const existing = ctx.tasks.selectTaskByIdempotencyKey.get({ key: t.idempotencyKey }) as TaskRow | undefined;
  if (existing === undefined) return null;
  const task = toTask(existing);
  const same = task.type === t.type && canonicalJson(task.payload) === canonicalJson(t.payload);
  if (!same) throw new IdempotencyConflictError(t.idempotencyKey, task.id);
  return { task, deduplicated: true };
}

function createOne(t: NewTask, now: number, rows: TaskRows): CreatedTask {
  const runAt = t.runAt ?? now;
  // Stored as sent; an idempotent create compares canonical forms (see `deduplicated`). The creation
  // history entry is the row itself (see `creationEntry`).
  rows.add(t, JSON.stringify(t.payload), runAt, now, shardOf(t.id));
  return { task: createdTask(t, now, runAt), deduplicated: false };
}

export function createTasks(ctx: SqliteContext, tasks: NewTask[]): CreatedTask[] {
  const now = ctx.clock.now();
  // Rows go in multi-row statements.
  const rows = new TaskRows(ctx.db);
  const out = tasks.map((t) => {
    if (t.idempotencyKey !== null) {
      // The key may be in a row of this batch that is still queued.
      rows.flush();
      const existing = deduplicated(ctx, t);
      if (existing !== null) return existing;
    }
    return createOne(t, now, rows);
  });
  rows.flush();
  return out;
}

export function expireLease(
  ctx: SqliteContext,
  input: ExpireInput,
): (Transitioned & { reason: ExpiryReason }) | null {
  const now = ctx.clock.now();
  const head = ctx.head(input.taskId);
  // Not due: gone, another attempt, not held (no lease), or renewed.
  if (head === undefined || head.version !== input.version) return null;
  if (head.lease_expires_at === null || head.lease_expires_at > now) return null;
  assertTransition(head.id, head.status, 'timeout');
  const timing = headTiming(head);
  const reason = expiryReason(head.status, now, head.started_at, timing);
  const next = nextAttemptAt(head.attempt, head.max_attempts, true, now, timing.backoff ?? input.backoff);
  const error: TaskError = { code: reason, message: EXPIRY_MESSAGES[reason], retryable: true };
  const { changes } = ctx.tasks.expireLease.run({
    id: head.id,
    version: head.version,
    status: head.status,
    now,
    error: JSON.stringify(error),
    nextAttemptAt: next,
    finishedAt: next === null ? now : null,
  });
  if (changes === 0) return null;
  const details = { leaseExpiresAt: head.lease_expires_at, nextAttemptAt: next };
  return {
    ...ctx.transitioned(ctx.written(head.seq), head.status, now, 'coordinator', reason, details),
    reason,
  };
}

export function completeFromResultRef(
  ctx: SqliteContext,
  input: { taskId: string; version: number },
): Transitioned | null {
  const now = ctx.clock.now();
  const { changes } = ctx.tasks.completeFromResultRef.run({ id: input.taskId, version: input.version, now });
  if (changes === 0) return null;
  return ctx.transitioned(
    ctx.writtenById(input.taskId),
    'running',
    now,
    'coordinator',
    'completed_from_result_ref',
  );
}

/** The head after an admin `write` passes its checks (no version or agent: admins act on what is there). */
function adminHead(ctx: SqliteContext, write: AttemptedWrite): HeadRow {
  const head = ctx.head(write.taskId);
  const err = checkWrite(toHead(head), write);
  if (err !== null || head === undefined) throw err;
  return head;
}

export function cancelTask(
  ctx: SqliteContext,
  input: { taskId: string; reason: string; actor: string },
): Transitioned {
  const write: AttemptedWrite = { kind: 'transition', to: 'cancelled', taskId: input.taskId };
  const head = adminHead(ctx, write);
  const now = ctx.clock.now();
  const { changes } = ctx.tasks.cancelTask.run({
    id: head.id,
    version: head.version,
    status: head.status,
    now,
  });
  if (changes === 0) throw ctx.refused(write);
  return ctx.transitioned(ctx.written(head.seq), head.status, now, input.actor, input.reason);
}

/**
 * A manual retry keeps the status (failed or timeout) and makes it claimable now; the next claim is
 * the transition. Its history entry is an annotation with `from` = `to`.
 */
export function retryTask(ctx: SqliteContext, input: { taskId: string; actor: string }): Transitioned {
  const write: AttemptedWrite = { kind: 'retry', taskId: input.taskId };
  const head = adminHead(ctx, write);
  const now = ctx.clock.now();
  const { changes } = ctx.tasks.retryTask.run({
    id: head.id,
    version: head.version,
    status: head.status,
    now,
  });
  if (changes === 0) throw ctx.refused(write);
  const written = ctx.written(head.seq);
  const details = { nextAttemptAt: now, maxAttempts: written.task.maxAttempts };
  return ctx.transitioned(written, head.status, now, input.actor, 'retry_requested', details);
}

export function releaseAgentTasks(ctx: SqliteContext, input: ReleaseAgentTasksInput): Transitioned[] {
  const now = ctx.clock.now();
  const only = input.task;
  const heads = (ctx.tasks.selectHeldHeads.all({ agentId: input.agentId }) as HeadRow[]).filter(
    (h) => only === undefined || (h.id === only.id && h.version === only.version),
  );
  const out: Transitioned[] = [];
  for (const head of heads) {
    assertTransition(head.id, head.status, 'timeout');
    const next = head.attempt < head.max_attempts ? now : null;
    const error = releasedTaskError(input);
    const { changes } = ctx.tasks.releaseTask.run({
      id: head.id,
      version: head.version,
      status: head.status,
      error: JSON.stringify(error),
      nextAttemptAt: next,
      finishedAt: next === null ? now : null,
    });
    if (changes === 0) continue;
    const written = ctx.written(head.seq);
    const details = { nextAttemptAt: next, final: written.task.final };
    const actor = input.actor ?? agentActor(input.agentId);
    out.push(ctx.transitioned(written, head.status, now, actor, input.reason, details));
  }
  return out;
}
