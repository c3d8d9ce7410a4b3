/**
 * PostgreSQL rows ↔ wire types. jsonb arrives parsed, booleans as booleans, bigint (epoch ms) as
 * numbers (the pool's type parser, see postgres-context.ts); everything maps one to one.
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
import { type MetricSample, SampleRing } from '../../core/watchdog/samples.js';
import { type AgentRow, toWatch } from '../agent-row.js';
import type { ShardLease } from '../store.js';
import { type TimingRow, timingInRow, timingOf } from '../task-columns.js';
import type { AgentWatch } from '../watchdog-store.js';
import { TASK_COLUMN_NAMES } from './sql-fragments.js';

/** A task row read as an object (jsonb arrives parsed, the backoff too). */
export interface TaskRow extends TimingRow<NonNullable<Timing['backoff']>> {
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
  progress_changed_at: number | null;
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

export interface ShardRow {
  shard: number;
  owner_id: string;
  epoch: number;
  expires_at: number;
}

/** A value → JSON text for a jsonb parameter; undefined and null → SQL NULL. */
export function jsonParam(value: unknown): string | null {
  return value === undefined || value === null ? null : pgJson(value);
}

/**
 * PostgreSQL's text and jsonb cannot hold the NUL character (U+0000), which SQLite and JSON can: it
 * is stored as U+FFFD instead, so that nothing an agent or user sends is refused for it — above all
 * not a heartbeat, a failure or a result, whose refusal would cost the attempt. (Logs do the same.)
 */
const NUL = '\0';
const REPLACEMENT = '\uFFFD';

/** `value` as JSON text for a jsonb parameter, NUL characters in its strings and keys replaced. */
export function pgJson(value: unknown): string {
  // The common case stays on JSON.stringify's fast path (a replacer function leaves it): only text
  // that has an escaped NUL in it (or the escaped backslash before a literal "u0000") is redone.
  const text = JSON.stringify(value);
  return text.includes('\\u0000') ? JSON.stringify(value, withoutNul) : text;
}

function withoutNul(_key: string, v: unknown): unknown {
  if (typeof v === 'string') return pgText(v);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const keys = Object.keys(v);
  if (!keys.some((k) => k.includes(NUL))) return v;
  return Object.fromEntries(keys.map((k) => [pgText(k), (v as Record<string, unknown>)[k]]));
}

/** A text parameter with NUL characters replaced (see `pgJson`). */
export function pgText<T extends string | null>(text: T): T {
  return (text?.includes(NUL) ? text.replaceAll(NUL, REPLACEMENT) : text) as T;
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
    timing: timingOf(r, r.backoff),
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
    progressChangedAt: r.progress_changed_at,
    leaseExpiresAt: r.lease_expires_at,
    nextAttemptAt: r.next_attempt_at,
    finishedAt: r.finished_at,
    final: isFinal(r.status, r.next_attempt_at),
  };
}

const col = (name: (typeof TASK_COLUMN_NAMES)[number]): number => TASK_COLUMN_NAMES.indexOf(name);
/** Positions of the task columns in a row read as an array (`taskColumns`, TASK_COLUMN_NAMES order). */
const ID = col('id');
const TYPE = col('type');
const STATUS = col('status');
const PAYLOAD = col('payload');
const IDEMPOTENCY_KEY = col('idempotency_key');
const PRIORITY = col('priority');
const RUN_AT = col('run_at');
const MAX_ATTEMPTS = col('max_attempts');
const ATTEMPT = col('attempt');
const VERSION = col('version');
const AGENT_ID = col('agent_id');
const RESUMABLE = col('resumable');
const REQUIRES = col('requires');
const LABELS = col('labels');
const BACKOFF = col('backoff');
const PROGRESS = col('progress');
const PHASE = col('phase');
const EXECUTION_DONE = col('execution_done');
const CHECKPOINT = col('checkpoint');
const SESSION = col('session');
const RESULT = col('result');
const RESULT_REF = col('result_ref');
const ERROR = col('error');
const CREATED_AT = col('created_at');
const CLAIMED_AT = col('claimed_at');
const STARTED_AT = col('started_at');
const LAST_HEARTBEAT_AT = col('last_heartbeat_at');
const PROGRESS_CHANGED_AT = col('progress_changed_at');
const LEASE_EXPIRES_AT = col('lease_expires_at');
const NEXT_ATTEMPT_AT = col('next_attempt_at');
const FINISHED_AT = col('finished_at');
/** Position of `event_count` in a task row read as an array. */
export const EVENT_COUNT_COLUMN = col('event_count');
/** How many task columns a task array starts with. */
export const TASK_COLUMN_COUNT = TASK_COLUMN_NAMES.length;

/**
 * `toTask` for a task as an array of its columns in TASK_COLUMN_NAMES order (what the claim and
 * completion statements return): the same Task, without an intermediate object keyed by column name.
 */
export function toTaskFromArray(r: unknown[]): Task {
  const status = r[STATUS] as TaskStatus;
  const nextAttemptAt = r[NEXT_ATTEMPT_AT] as number | null;
  return {
    id: r[ID] as string,
    type: r[TYPE] as string,
    status,
    payload: r[PAYLOAD] as Json,
    attempt: r[ATTEMPT] as number,
    maxAttempts: r[MAX_ATTEMPTS] as number,
    version: r[VERSION] as number,
    agentId: r[AGENT_ID] as string | null,
    priority: r[PRIORITY] as number,
    resumable: r[RESUMABLE] as boolean,
    requires: r[REQUIRES] as string[],
    labels: r[LABELS] as Record<string, string>,
    idempotencyKey: r[IDEMPOTENCY_KEY] as string | null,
    timing: timingInRow(r, r[BACKOFF] as Timing['backoff'] | null),
    progress: r[PROGRESS] as number | null,
    phase: r[PHASE] as string | null,
    executionDone: r[EXECUTION_DONE] as boolean,
    checkpoint: r[CHECKPOINT] as Json | null,
    session: r[SESSION] as Json | null,
    result: r[RESULT] as Json | null,
    resultRef: r[RESULT_REF] as ResultRef | null,
    error: r[ERROR] as TaskError | null,
    createdAt: r[CREATED_AT] as number,
    runAt: r[RUN_AT] as number,
    claimedAt: r[CLAIMED_AT] as number | null,
    startedAt: r[STARTED_AT] as number | null,
    lastHeartbeatAt: r[LAST_HEARTBEAT_AT] as number | null,
    progressChangedAt: r[PROGRESS_CHANGED_AT] as number | null,
    leaseExpiresAt: r[LEASE_EXPIRES_AT] as number | null,
    nextAttemptAt,
    finishedAt: r[FINISHED_AT] as number | null,
    final: isFinal(status, nextAttemptAt),
  };
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
    details: (row.details ?? null) as TaskEvent['details'],
  };
}

export function toLogLine(row: LogLine): LogLine {
  return { seq: row.seq, at: row.at, attempt: row.attempt, stream: row.stream, text: row.text };
}

export function toShardLease(r: ShardRow): ShardLease {
  return { shard: r.shard, ownerId: r.owner_id, epoch: r.epoch, expiresAt: r.expires_at };
}

/** An agents row as PostgreSQL returns it: the sample ring is a jsonb array of tuples. */
export type PgAgentRow = Omit<AgentRow, 'samples'> & { samples: MetricSample[] | null };

/** The watch state of a PostgreSQL agents row (its ring made flat), with the tasks it holds. */
export function pgWatch(row: PgAgentRow, heldTaskIds: string[]): AgentWatch {
  return toWatch({ ...row, samples: SampleRing.of(row.samples ?? []) }, heldTaskIds);
}
