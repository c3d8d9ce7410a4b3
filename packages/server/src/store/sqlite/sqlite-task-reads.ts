/** Task reads: one task, pages, history, logs, leases and queue numbers. */
import type { LogLine, Task, TaskEvent, TaskStatus } from '@rouse/protocol';
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
import { type EventRow, rowSeq, type TaskRow, toEvent, toLogLine, toTask } from './row-mapping.js';
import type { SqliteContext } from './sqlite-context.js';

const DEFAULT_LIST_LIMIT = 100;

export function listTasks(
  ctx: SqliteContext,
  query: TaskQuery,
): { tasks: Task[]; nextCursor: string | null } {
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new ValidationError('limit', 'must be an integer >= 1');
  const labels = query.labels && Object.keys(query.labels).length > 0 ? JSON.stringify(query.labels) : null;
  const params = {
    beforeSeq: query.cursor ? decodeCursor(query.cursor) : null,
    type: query.type ?? null,
    agentId: query.agentId ?? null,
    labels,
    search: query.search === undefined || query.search === '' ? null : query.search,
    limit: limit + 1,
  };
  let rows: TaskRow[];
  if (query.statuses && query.statuses.length > 0) {
    // Per status, its newest rows (through the status index, but for completed), then the newest of all.
    rows = [...new Set(query.statuses)]
      .flatMap(
        (status) =>
          (status === 'completed'
            ? ctx.tasks.listCompletedTasks.all(params)
            : ctx.tasks.listTasksOfStatus.all({ ...params, status })) as TaskRow[],
      )
      .sort((a, b) => rowSeq(b) - rowSeq(a))
      .slice(0, limit + 1);
  } else {
    rows = ctx.tasks.listTasks.all(params) as TaskRow[];
  }
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    tasks: page.map(toTask),
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(rowSeq(last)) : null,
  };
}

export function taskSummary(
  ctx: SqliteContext,
  query: { since: number; latencySample: number },
): TaskSummary {
  // One scan for the counts and what finished in the window (the latencies take a second one).
  const groups = ctx.tasks.summaryByTypeAndStatus.all({ since: query.since }) as {
    type: string;
    status: TaskStatus;
    count: number;
    completed: number;
    failed: number;
  }[];
  let completedSince = 0;
  let failedSince = 0;
  for (const g of groups) {
    completedSince += g.completed;
    failedSince += g.failed;
  }
  return {
    byTypeAndStatus: groups.map((g) => ({ type: g.type, status: g.status, count: g.count })),
    completedSince,
    failedSince,
    latenciesMs: (
      ctx.tasks.summaryLatencies.all({ since: query.since, limit: Math.max(1, query.latencySample) }) as {
        ms: number;
      }[]
    )
      .map((r) => r.ms)
      .sort((a, b) => a - b),
  };
}

export function listTaskEvents(ctx: SqliteContext, taskId: string): TaskEvent[] {
  return historyOf(ctx.tasks.selectEvents.all({ taskId }) as (EventRow & { created_at: number })[], toEvent);
}

export function readLogs(ctx: SqliteContext, taskId: string, afterSeq: number, limit: number): LogLine[] {
  return (ctx.tasks.selectLogs.all({ taskId, afterSeq, limit }) as LogLine[]).map(toLogLine);
}

export function activeLeases(ctx: SqliteContext, query: ActiveLeasesQuery = {}): LeaseEntry[] {
  const dueBy = query.dueBy ?? null;
  const { shards } = query;
  // The stored shard is shardOf(id) over LEASE_SHARD_COUNT; another count filters here instead.
  const stored = shards !== undefined && shards.count === LEASE_SHARD_COUNT;
  if (shards !== undefined && shards.ids.length === 0) return [];
  const raw = stored
    ? ctx.tasks.selectShardLeases.all({ shards: JSON.stringify(shards.ids), dueBy })
    : ctx.tasks.selectActiveLeases.all({ dueBy });
  const wanted = shards !== undefined && !stored ? new Set(shards.ids) : null;
  const rows = (
    wanted === null ? raw : (raw as { id: string }[]).filter((r) => wanted.has(shardOf(r.id, shards!.count)))
  ) as {
    id: string;
    version: number;
    status: LeaseEntry['status'];
    lease_expires_at: number;
    execution_done: number;
    has_result_ref: number;
    heartbeat_timeout_ms: number;
  }[];
  return rows.map((r) => ({
    taskId: r.id,
    version: r.version,
    status: r.status,
    leaseExpiresAt: r.lease_expires_at,
    executionDone: r.execution_done === 1,
    hasResultRef: r.has_result_ref === 1,
    heartbeatTimeoutMs: r.heartbeat_timeout_ms,
  }));
}

export function nextClaimableAt(ctx: SqliteContext, types?: string[], after?: number): number | null {
  if (types !== undefined && types.length === 0) return null;
  const row = ctx.tasks.selectNextClaimableAt.get({
    after: after ?? ctx.clock.now(),
    types: types === undefined ? null : JSON.stringify(types),
  }) as { available_at: number } | undefined;
  return row?.available_at ?? null;
}

/** A task that is not waiting to be claimed (held or final) has nothing ahead of it. */
export function queueStats(ctx: SqliteContext, taskId: string): QueueStats {
  const pos = ctx.tasks.selectQueuePosition.get({ id: taskId }) as
    | { seq: number; type: string; priority: number; available_at: number | null }
    | undefined;
  if (pos === undefined) throw new NotFoundError('task', taskId);
  if (pos.available_at === null) return { ahead: 0 };
  const { ahead } = ctx.tasks.countAhead.get({
    type: pos.type,
    now: ctx.clock.now(),
    priority: pos.priority,
    seq: pos.seq,
  }) as { ahead: number };
  return { ahead };
}

export function readTransitions(
  ctx: SqliteContext,
  refs: TransitionRef[],
): { task: Task; event: TaskEvent }[] {
  const tasks = new Map<string, Task | null>();
  const out: { task: Task; event: TaskEvent }[] = [];
  for (const { taskId, seq } of refs) {
    let task = tasks.get(taskId);
    if (task === undefined) {
      task = ctx.task(taskId);
      tasks.set(taskId, task);
    }
    if (task === null) continue;
    const rows = ctx.tasks.selectEventRows.all({ taskId, seq }) as EventRow[];
    const event = storedEntry(rows.map(toEvent), seq);
    if (event !== undefined) out.push({ task, event });
    else if (seq === 1) out.push({ task, event: creationEntry(task.createdAt) });
  }
  return out;
}
