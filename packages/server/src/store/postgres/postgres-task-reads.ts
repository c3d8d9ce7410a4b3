/** Task reads: one task, pages, history, logs, leases and queue numbers. */
import type { LogLine, Task, TaskEvent } from '@rouse/protocol';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { LEASE_SHARD_COUNT, shardOf } from '../lease-shards.js';
import type {
  ActiveLeasesQuery,
  LeaseEntry,
  QueueStats,
  TaskQuery,
  TaskSummary,
  TransitionRef,
} from '../store.js';
import { creationEntry, historyOf, storedEntry } from '../write-rules.js';
import { ADMIN_SQL } from './admin-statements.js';
import type { PgContext } from './postgres-context.js';
import { type EventRow, pgJson, type TaskRow, toEvent, toLogLine, toTask } from './row-mapping.js';
import { TASK_SQL } from './task-statements.js';

const DEFAULT_LIST_LIMIT = 100;

export async function getTask(ctx: PgContext, id: string): Promise<Task | null> {
  const [row] = await ctx.rows<TaskRow>('selectTask', TASK_SQL.selectTask, [id]);
  return row === undefined ? null : toTask(row);
}

export async function listTasks(
  ctx: PgContext,
  query: TaskQuery,
): Promise<{ tasks: Task[]; nextCursor: string | null }> {
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new ValidationError('limit', 'must be an integer >= 1');
  const labels = query.labels && Object.keys(query.labels).length > 0 ? pgJson(query.labels) : null;
  const params = [
    query.cursor ? decodeCursor(query.cursor) : null,
    query.type ?? null,
    query.agentId ?? null,
    labels,
    limit + 1,
    query.search === undefined || query.search === '' ? null : query.search,
  ];
  const rows =
    query.statuses && query.statuses.length > 0
      ? await ctx.rows<TaskRow>('listTasksByStatus', TASK_SQL.listTasksByStatus, [...params, query.statuses])
      : await ctx.rows<TaskRow>('listTasks', TASK_SQL.listTasks, params);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    tasks: page.map(toTask),
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(last.seq) : null,
  };
}

export async function taskSummary(
  ctx: PgContext,
  query: { since: number; latencySample: number },
): Promise<TaskSummary> {
  const [byTypeAndStatus, [finished], latencies] = await Promise.all([
    ctx.rows<TaskSummary['byTypeAndStatus'][number]>(
      'summaryByTypeAndStatus',
      TASK_SQL.summaryByTypeAndStatus,
    ),
    ctx.rows<{ completed: number; failed: number }>('summaryFinishedSince', TASK_SQL.summaryFinishedSince, [
      query.since,
    ]),
    ctx.rows<{ ms: number }>('summaryLatencies', TASK_SQL.summaryLatencies, [
      query.since,
      Math.max(1, query.latencySample),
    ]),
  ]);
  return {
    byTypeAndStatus,
    completedSince: finished?.completed ?? 0,
    failedSince: finished?.failed ?? 0,
    latenciesMs: latencies.map((r) => r.ms).sort((a, b) => a - b),
  };
}

export async function listTaskEvents(ctx: PgContext, taskId: string): Promise<TaskEvent[]> {
  const rows = await ctx.rows<EventRow & { created_at: number }>('selectEvents', TASK_SQL.selectEvents, [
    taskId,
  ]);
  return historyOf(rows, toEvent);
}

export async function readLogs(
  ctx: PgContext,
  taskId: string,
  afterSeq: number,
  limit: number,
): Promise<LogLine[]> {
  return (await ctx.rows<LogLine>('selectLogs', TASK_SQL.selectLogs, [taskId, afterSeq, limit])).map(
    toLogLine,
  );
}

interface LeaseRow {
  id: string;
  version: number;
  status: LeaseEntry['status'];
  lease_expires_at: number;
  execution_done: boolean;
  has_result_ref: boolean;
  heartbeat_timeout_ms: number;
}

export async function activeLeases(ctx: PgContext, query: ActiveLeasesQuery = {}): Promise<LeaseEntry[]> {
  const { shards } = query;
  if (shards !== undefined && shards.ids.length === 0) return [];
  // The stored shard is shardOf(id) over LEASE_SHARD_COUNT; another count filters here instead.
  const stored = shards !== undefined && shards.count === LEASE_SHARD_COUNT;
  const dueBy = query.dueBy ?? Number.MAX_SAFE_INTEGER;
  const rows = stored
    ? await ctx.rows<LeaseRow>('selectShardLeases', ADMIN_SQL.selectShardLeases, [dueBy, shards.ids])
    : await ctx.rows<LeaseRow>('selectActiveLeases', ADMIN_SQL.selectActiveLeases, [dueBy]);
  const wanted = shards !== undefined && !stored ? new Set(shards.ids) : null;
  return rows
    .filter((r) => wanted === null || wanted.has(shardOf(r.id, shards!.count)))
    .map((r) => ({
      taskId: r.id,
      version: r.version,
      status: r.status,
      leaseExpiresAt: r.lease_expires_at,
      executionDone: r.execution_done,
      hasResultRef: r.has_result_ref,
      heartbeatTimeoutMs: r.heartbeat_timeout_ms,
    }));
}

export async function nextClaimableAt(
  ctx: PgContext,
  types?: string[],
  after?: number,
): Promise<number | null> {
  if (types !== undefined && types.length === 0) return null;
  const [row] = await ctx.rows<{ available_at: number }>(
    'selectNextClaimableAt',
    ADMIN_SQL.selectNextClaimableAt,
    [ctx.now(), types ?? null, after ?? null],
  );
  return row?.available_at ?? null;
}

/** A task that is not waiting to be claimed (held or final) has nothing ahead of it. */
export async function queueStats(ctx: PgContext, taskId: string): Promise<QueueStats> {
  const [row] = await ctx.rows<{ available_at: number | null; ahead: number }>(
    'selectQueueStats',
    ADMIN_SQL.selectQueueStats,
    [ctx.now(), taskId],
  );
  if (row === undefined) throw new NotFoundError('task', taskId);
  return { ahead: row.available_at === null ? 0 : row.ahead };
}

export async function readTransitions(
  ctx: PgContext,
  refs: TransitionRef[],
): Promise<{ task: Task; event: TaskEvent }[]> {
  if (refs.length === 0) return [];
  const ids = [...new Set(refs.map((r) => r.taskId))];
  const [tasks, events] = await Promise.all([
    ctx.rows<TaskRow>('selectTasks', TASK_SQL.selectTasks, [ids]),
    ctx.rows<EventRow & { task_id: string }>('selectEventsByRef', TASK_SQL.selectEventsByRef, [
      refs.map((r) => r.taskId),
      refs.map((r) => r.seq),
    ]),
  ]);
  const taskById = new Map(tasks.map((t) => [t.id, toTask(t)]));
  const rowByRef = new Map(events.map((e) => [`${e.task_id}\u0000${e.seq}`, toEvent(e)]));
  const out: { task: Task; event: TaskEvent }[] = [];
  for (const ref of refs) {
    const task = taskById.get(ref.taskId);
    if (task === undefined) continue;
    const rows = [ref.seq, ref.seq - 1].flatMap((seq) => rowByRef.get(`${ref.taskId}\u0000${seq}`) ?? []);
    const event = storedEntry(rows, ref.seq);
    if (event !== undefined) out.push({ task, event });
    else if (ref.seq === 1) out.push({ task, event: creationEntry(task.createdAt) });
  }
  return out;
}
