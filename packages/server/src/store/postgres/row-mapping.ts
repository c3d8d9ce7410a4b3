/**
 * PostgreSQL rows ↔ wire types. jsonb arrives parsed, booleans as booleans, bigint (epoch ms) as
 * numbers (the pool's type parser, see postgres-context.ts); everything maps one to one.
 */
import type {
  Agent,
  AgentMetrics,
  AgentStatus,
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
import type { ShardLease } from '../store.js';
import type { TaskHead } from '../write-errors.js';

export interface TaskRow {
  seq: number;
  id: string;
  type: string;
  status: TaskStatus;
  payload: Json;
  idempotency_key: string | null;
  priority: number;
  run_at: number;
  max_attempts: number;
  attempt: number;
  version: number;
  agent_id: string | null;
  resumable: boolean;
  requires: string[];
  labels: Record<string, string>;
  timing: Timing;
  progress: number | null;
  phase: string | null;
  execution_done: boolean;
  checkpoint: Json | null;
  session: Json | null;
  result: Json | null;
  result_ref: ResultRef | null;
  error: TaskError | null;
  created_at: number;
  claimed_at: number | null;
  started_at: number | null;
  last_heartbeat_at: number | null;
  lease_expires_at: number | null;
  next_attempt_at: number | null;
  finished_at: number | null;
  event_count: number;
}

/** A task row returned by a write, with the history entries the same statement appended. */
export interface WrittenRow extends TaskRow {
  events: EventRow[];
}

export interface HeadRow {
  id: string;
  status: TaskStatus;
  version: number;
  agent_id: string | null;
  next_attempt_at: number | null;
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
  details: Json | null;
}

export interface AgentRow {
  id: string;
  agent_type: string;
  name: string;
  host: string | null;
  pid: number | null;
  task_types: string[];
  labels: Record<string, string>;
  status: AgentStatus;
  registered_at: number;
  last_heartbeat_at: number | null;
  last_poll_at: number | null;
  last_poll_types: string[];
  metrics: AgentMetrics | null;
  current_task_ids: string[];
}

export interface ShardRow {
  shard: number;
  owner_id: string;
  epoch: number;
  expires_at: number;
}

/** A value → JSON text for a jsonb parameter; undefined and null → SQL NULL. */
export function jsonParam(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function toTask(r: TaskRow): Task {
  return {
    id: r.id,
    type: r.type,
    status: r.status,
    payload: r.payload,
    attempt: r.attempt,
    maxAttempts: r.max_attempts,
    version: r.version,
    agentId: r.agent_id,
    priority: r.priority,
    resumable: r.resumable,
    requires: r.requires,
    labels: r.labels,
    idempotencyKey: r.idempotency_key,
    timing: r.timing,
    progress: r.progress,
    phase: r.phase,
    executionDone: r.execution_done,
    checkpoint: r.checkpoint,
    session: r.session,
    result: r.result,
    resultRef: r.result_ref,
    error: r.error,
    createdAt: r.created_at,
    runAt: r.run_at,
    claimedAt: r.claimed_at,
    startedAt: r.started_at,
    lastHeartbeatAt: r.last_heartbeat_at,
    leaseExpiresAt: r.lease_expires_at,
    nextAttemptAt: r.next_attempt_at,
    finishedAt: r.finished_at,
    final: isFinal(r.status, r.next_attempt_at),
  };
}

export function toHead(row: HeadRow | TaskRow | undefined): TaskHead | null {
  if (row === undefined) return null;
  return {
    id: row.id,
    status: row.status,
    version: row.version,
    agentId: row.agent_id,
    nextAttemptAt: row.next_attempt_at,
  };
}

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
    details: (row.details ?? null) as TaskEvent['details'],
  };
}

export function toLogLine(row: LogLine): LogLine {
  return { seq: row.seq, at: row.at, attempt: row.attempt, stream: row.stream, text: row.text };
}

export function toAgent(row: AgentRow): Agent {
  return {
    id: row.id,
    agentType: row.agent_type,
    name: row.name,
    host: row.host,
    pid: row.pid,
    taskTypes: row.task_types,
    labels: row.labels,
    status: row.status,
    registeredAt: row.registered_at,
    lastHeartbeatAt: row.last_heartbeat_at,
    lastPollAt: row.last_poll_at,
    lastPollTypes: row.last_poll_types,
    metrics: row.metrics,
    currentTaskIds: row.current_task_ids,
  };
}

export function toShardLease(r: ShardRow): ShardLease {
  return { shard: r.shard, ownerId: r.owner_id, epoch: r.epoch, expiresAt: r.expires_at };
}
