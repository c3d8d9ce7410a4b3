/**
 * SQLite rows ↔ wire types. JSON columns are text, booleans 0/1; everything else maps one to one.
 * Whole tasks are read as raw arrays (cheaper than 31-key objects on the hot path).
 */
import type {
  Json,
  LogLine,
  ResultRef,
  Task,
  TaskError,
  TaskEvent,
  TaskStatus,
  Timing,
} from '@rouse/protocol';
import { isFinal } from '../../core/transitions.js';
import { type TimingRow, timingInRow, timingOf } from '../task-columns.js';
import { TASK_COLUMN_NAMES } from './task-statements.js';

/** A whole task as a raw row, columns in `TASK_COLUMN_NAMES` order. */
export type TaskRow = unknown[];

type TaskColumn = (typeof TASK_COLUMN_NAMES)[number];
const COL = Object.fromEntries(TASK_COLUMN_NAMES.map((name, i) => [name, i])) as Record<TaskColumn, number>;

/** The head columns (HEAD_COLUMNS); the backoff is JSON text. */
export interface HeadRow extends TimingRow<string> {
  seq: number;
  id: string;
  status: TaskStatus;
  version: number;
  attempt: number;
  max_attempts: number;
  agent_id: string | null;
  started_at: number | null;
  lease_expires_at: number | null;
  next_attempt_at: number | null;
  progress: number | null;
  phase: string | null;
  execution_done: number;
  log_bytes: number;
  progress_changed_at: number | null;
  /** JSON text. */
  requires: string;
}

export interface EventRow {
  seq: number;
  at: number;
  from_status: TaskStatus | null;
  to_status: TaskStatus;
  version: number;
  attempt: number;
  actor: string;
  reason: string;
  details: string | null;
}

/** JSON text → value; SQL NULL → null. */
export function parseJson<T = Json>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** A value → JSON text; undefined and null → SQL NULL. */
export function jsonText(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function toTask(r: TaskRow): Task {
  const status = r[COL.status] as TaskStatus;
  const nextAttemptAt = r[COL.next_attempt_at] as number | null;
  return {
    id: r[COL.id] as string,
    type: r[COL.type] as string,
    status,
    payload: JSON.parse(r[COL.payload] as string) as Json,
    attempt: r[COL.attempt] as number,
    maxAttempts: r[COL.max_attempts] as number,
    version: r[COL.version] as number,
    agentId: r[COL.agent_id] as string | null,
    priority: r[COL.priority] as number,
    resumable: r[COL.resumable] === 1,
    requires: JSON.parse(r[COL.requires] as string) as string[],
    labels: JSON.parse(r[COL.labels] as string) as Record<string, string>,
    idempotencyKey: r[COL.idempotency_key] as string | null,
    timing: rowTiming(r),
    progress: r[COL.progress] as number | null,
    phase: r[COL.phase] as string | null,
    executionDone: r[COL.execution_done] === 1,
    checkpoint: parseJson(r[COL.checkpoint] as string | null),
    session: parseJson(r[COL.session] as string | null),
    result: parseJson(r[COL.result] as string | null),
    resultRef: parseJson<ResultRef>(r[COL.result_ref] as string | null),
    error: parseJson<TaskError>(r[COL.error] as string | null),
    createdAt: r[COL.created_at] as number,
    runAt: r[COL.run_at] as number,
    claimedAt: r[COL.claimed_at] as number | null,
    startedAt: r[COL.started_at] as number | null,
    lastHeartbeatAt: r[COL.last_heartbeat_at] as number | null,
    progressChangedAt: r[COL.progress_changed_at] as number | null,
    leaseExpiresAt: r[COL.lease_expires_at] as number | null,
    nextAttemptAt,
    finishedAt: r[COL.finished_at] as number | null,
    final: isFinal(status, nextAttemptAt),
  };
}

/** What a claim sets (TASK_SQL.claimTask's parameters). */
export interface ClaimChanges {
  status: 'claimed' | 'running';
  agentId: string;
  now: number;
  startedAt: number | null;
  leaseExpiresAt: number;
  /** The row's timing, parsed already (the lease needed it). */
  timing: Timing;
}

/**
 * The task raw row `r` becomes after `TASK_SQL.claimTask` (read before it, in the same transaction):
 * the claim's changes applied here instead of reading the row back. Keep in step with that statement.
 */
export function claimedTask(r: TaskRow, c: ClaimChanges): Task {
  const resumable = r[COL.resumable] === 1;
  return {
    id: r[COL.id] as string,
    type: r[COL.type] as string,
    status: c.status,
    payload: JSON.parse(r[COL.payload] as string) as Json,
    attempt: (r[COL.attempt] as number) + 1,
    maxAttempts: r[COL.max_attempts] as number,
    version: (r[COL.version] as number) + 1,
    agentId: c.agentId,
    priority: r[COL.priority] as number,
    resumable,
    requires: JSON.parse(r[COL.requires] as string) as string[],
    labels: JSON.parse(r[COL.labels] as string) as Record<string, string>,
    idempotencyKey: r[COL.idempotency_key] as string | null,
    timing: c.timing,
    progress: null,
    phase: null,
    executionDone: false,
    checkpoint: resumable ? parseJson(r[COL.checkpoint] as string | null) : null,
    session: parseJson(r[COL.session] as string | null),
    result: null,
    resultRef: null,
    error: null,
    createdAt: r[COL.created_at] as number,
    runAt: r[COL.run_at] as number,
    claimedAt: c.now,
    startedAt: c.startedAt,
    lastHeartbeatAt: null,
    progressChangedAt: c.startedAt,
    leaseExpiresAt: c.leaseExpiresAt,
    nextAttemptAt: null,
    finishedAt: null,
    final: false,
  };
}

/** Small accessors of raw task rows, for writes that need a few columns of a whole row. */
export const rowField = {
  id: (r: TaskRow): string => r[COL.id] as string,
  status: (r: TaskRow): TaskStatus => r[COL.status] as TaskStatus,
  version: (r: TaskRow): number => r[COL.version] as number,
  priority: (r: TaskRow): number => r[COL.priority] as number,
  seq: (r: TaskRow): number => r[COL.seq] as number,
};

/** The timing of a raw task row. */
export function rowTiming(r: TaskRow): Timing {
  return timingInRow(r, parseJson<NonNullable<Timing['backoff']>>(r[COL.backoff] as string | null));
}

/** The timing of a head row. */
export function headTiming(h: HeadRow): Timing {
  return timingOf(h, parseJson<NonNullable<Timing['backoff']>>(h.backoff));
}

/** The insertion sequence of a raw task row (list cursors). */
export function rowSeq(r: TaskRow): number {
  return r[COL.seq] as number;
}

/** The seq of the last history entry of a raw task row. */
export function rowEventCount(r: TaskRow): number {
  return r[COL.event_count] as number;
}

export { toHead } from '../write-errors.js';

export function toEvent(row: EventRow): TaskEvent {
  return {
    seq: row.seq,
    at: row.at,
    from: row.from_status,
    to: row.to_status,
    version: row.version,
    attempt: row.attempt,
    actor: row.actor,
    reason: row.reason,
    details: parseJson(row.details),
  };
}

export function toLogLine(row: LogLine): LogLine {
  return { seq: row.seq, at: row.at, attempt: row.attempt, stream: row.stream, text: row.text };
}
