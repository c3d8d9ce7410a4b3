/**
 * Operator-side task operations: create (single and batch, idempotent by key), reads, logs,
 * results, cancel and manual retry.
 */
import {
  COORDINATOR_LOG_STREAM,
  type CreateTaskRequest,
  type CreateTaskResponse,
  type LogsResponse,
  requestedFields,
  type Task,
  type TaskEvent,
  type TimingInput,
} from '@rouse/protocol';
import { NotFoundError, RouseError, ValidationError } from '../core/errors.js';
import type { TaskTypeDefaults } from '../core/policies/task-type-defaults.js';
import { resolveTiming } from '../core/timing.js';
import { canonicalJson } from '../store/canonical-json.js';
import type { NewTask, TaskQuery } from '../store/store.js';
import { requireAdmin, requireRead } from './auth.js';
import type { Caller, StoredResult } from './coordinator.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { newId } from './ids.js';

/** Lines returned by one `readLogs` call; followers page with `after`. */
export const LOG_PAGE_LINES = 1000;

export async function createTasks(
  ctx: CoordinatorContext,
  caller: Caller,
  reqs: readonly CreateTaskRequest[],
): Promise<CreateTaskResponse[]> {
  requireAdmin(caller, 'create tasks');
  const now = ctx.clock.now();
  const batch = reqs.length > 1;
  const tasks = reqs.map((req, i) => toNewTask(ctx, req, now, batch ? `tasks[${i}].` : ''));
  if (batch) refuseConflictingKeys(tasks);
  // A single create shares its store write with the other creates of this event-loop turn.
  const created =
    tasks.length === 1 ? [await ctx.writes.createTask(tasks[0]!)] : await ctx.store.createTasks(tasks);
  const claimableNow = new Map<string, number>();
  for (const { task, deduplicated } of created) {
    if (deduplicated) continue;
    if (ctx.bus.active) ctx.bus.publish({ type: 'task.created', at: task.createdAt, task });
    ctx.eventRelay.relay(task.id, CREATION);
    if (task.runAt > now) ctx.waiters.notifyAt(task.type, task.runAt);
    else claimableNow.set(task.type, (claimableNow.get(task.type) ?? 0) + 1);
  }
  for (const [type, count] of claimableNow) ctx.waiters.notify(type, count);
  return created.map(({ task, deduplicated }) => ({ task, deduplicated }));
}

/**
 * A batch that repeats an idempotency key must repeat the same task (type and payload): it is then
 * created once. Two different tasks under one key are refused before the store is asked, naming
 * both entries (a batch is all or nothing, so no task exists to point at).
 */
function refuseConflictingKeys(tasks: readonly NewTask[]): void {
  const first = new Map<string, { index: number; type: string; payload: string }>();
  for (const [index, t] of tasks.entries()) {
    if (t.idempotencyKey === null) continue;
    const payload = canonicalJson(t.payload);
    const seen = first.get(t.idempotencyKey);
    if (seen === undefined) {
      first.set(t.idempotencyKey, { index, type: t.type, payload });
      continue;
    }
    if (seen.type === t.type && seen.payload === payload) continue;
    throw new RouseError(
      'idempotency_conflict',
      `tasks[${index}].idempotencyKey ${JSON.stringify(t.idempotencyKey)} repeats tasks[${seen.index}]'s with a different type or payload; nothing was created (a batch is all or nothing): give each task its own key`,
      { idempotencyKey: t.idempotencyKey, index, firstIndex: seen.index },
    );
  }
}

/** A task's creation is its first history entry. */
const CREATION = [{ seq: 1 }] as const;

/**
 * The timing a task of this type gets: its policy's `task_types` defaults, overridden field by field
 * by the task's own. A task that gives an expected duration derives its interval and timeouts from
 * it, so the type's explicit ones give way.
 */
function timingInputFor(
  req: CreateTaskRequest,
  defaults: TaskTypeDefaults | undefined,
): TimingInput | undefined {
  if (defaults === undefined) return req.timing;
  const base: TimingInput = { ...defaults.timing };
  if (req.timing?.expectedDurationMs !== undefined) {
    delete base.heartbeatIntervalMs;
    delete base.executionTimeoutMs;
    delete base.attemptDeadlineMs;
  }
  return { ...base, ...req.timing };
}

function toNewTask(ctx: CoordinatorContext, req: CreateTaskRequest, now: number, prefix: string): NewTask {
  const typeDefaults = ctx.policies.current().taskTypeDefaults(req.type);
  let timing: NewTask['timing'];
  try {
    timing = resolveTiming(timingInputFor(req, typeDefaults), ctx.options.timingDefaults);
    // Its type's retry backoff travels with the task (the store schedules retries with it).
    if (typeDefaults?.backoff !== undefined) timing = { ...timing, backoff: { ...typeDefaults.backoff } };
  } catch (err) {
    const issue =
      err instanceof ValidationError
        ? (err.details.issues as { path: string; message: string }[])[0]
        : undefined;
    if (prefix && issue) throw new ValidationError(`${prefix}${issue.path}`, issue.message);
    throw err;
  }
  const r = requestedFields(req);
  return {
    id: newId('tsk', now),
    type: r.type,
    payload: r.payload,
    idempotencyKey: r.idempotencyKey,
    priority: r.priority,
    runAt: req.runAt ?? null,
    maxAttempts: req.maxAttempts ?? typeDefaults?.maxAttempts ?? ctx.options.defaultMaxAttempts,
    resumable: r.resumable,
    requires: r.requires,
    labels: r.labels,
    timing,
  };
}

export async function getTask(ctx: CoordinatorContext, caller: Caller, id: string): Promise<Task> {
  requireRead(caller, 'read tasks');
  const task = await ctx.store.getTask(id);
  if (task === null) throw new NotFoundError('task', id);
  return task;
}

export async function listTasks(ctx: CoordinatorContext, caller: Caller, query: TaskQuery) {
  requireRead(caller, 'list tasks');
  return ctx.store.listTasks(query);
}

export async function listTaskEvents(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
): Promise<TaskEvent[]> {
  await getTask(ctx, caller, id);
  return ctx.store.listTaskEvents(id);
}

export async function readLogs(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  afterSeq: number,
): Promise<LogsResponse> {
  await getTask(ctx, caller, id);
  const lines = await ctx.store.readLogs(id, afterSeq, LOG_PAGE_LINES);
  // The page that holds the coordinator's notice (the log reached its cap there) says so.
  return lines.some((l) => l.stream === COORDINATOR_LOG_STREAM) ? { lines, truncated: true } : { lines };
}

export async function waitForLogs(
  ctx: CoordinatorContext,
  id: string,
  afterSeq: number,
  signal: AbortSignal,
): Promise<void> {
  // Watch first, then look, so a line appended in between still wakes us.
  const watch = ctx.logWatchers.watch(id, signal);
  const [lines, task] = await Promise.all([ctx.store.readLogs(id, afterSeq, 1), ctx.store.getTask(id)]);
  if (task === null) {
    watch.cancel();
    throw new NotFoundError('task', id);
  }
  if (lines.length > 0 || task.final) watch.cancel();
  // Lines appended through another coordinator wake nobody here: look again after a while anyway.
  const timer = ctx.clock.setTimer(ctx.options.logFollowPollMs, () => watch.cancel());
  await watch.done;
  timer.cancel();
}

export async function getResult(ctx: CoordinatorContext, caller: Caller, id: string): Promise<StoredResult> {
  const task = await getTask(ctx, caller, id);
  if (task.resultRef !== null)
    return { blob: { ref: task.resultRef, stream: await ctx.blobs.open(task.resultRef) } };
  if (task.status === 'completed') return { inline: task.result };
  throw new RouseError(
    'not_found',
    `task ${id} has no result yet (it is ${task.status}); ask again once it completes`,
    {
      kind: 'result',
      id,
      status: task.status,
    },
  );
}

export async function cancelTask(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  reason: string | undefined,
): Promise<Task> {
  requireAdmin(caller, 'cancel tasks');
  const t = await ctx.store.cancelTask({
    taskId: id,
    reason: reason ?? 'cancelled by an operator',
    actor: 'admin',
  });
  ctx.applyTransition(t);
  ctx.logger.info({ taskId: id, reason }, 'task cancelled');
  return t.task;
}

export async function retryTask(ctx: CoordinatorContext, caller: Caller, id: string): Promise<Task> {
  requireAdmin(caller, 'retry tasks');
  const t = await ctx.store.retryTask({ taskId: id, actor: 'admin' });
  ctx.applyTransition(t);
  ctx.logger.info({ taskId: id }, 'task retried by an operator');
  return t.task;
}
