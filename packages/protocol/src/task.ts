/**
 * Task wire types (docs/protocol.md "Tasks").
 *
 * Glossary (docs/design.md §1):
 * - task: one unit of work for an agent: `type`, JSON `payload`, status, attempts, timing.
 * - attempt: one claim of a task by one agent, numbered from 1.
 * - version: the fencing token; grows on every claim; every agent write carries it.
 * - lease: the coordinator's promise that an agent holds a task until `leaseExpiresAt`.
 * - checkpoint / session: resume state and conversation context handed to the next attempt.
 *
 * Times are epoch milliseconds (`...At`), durations milliseconds (`...Ms`). Request types are
 * inferred from the request schemas (`schemas/tasks.ts`), so the two cannot drift.
 */
import type { z } from 'zod';
import type { Json, JsonObject } from './json.js';
import type * as schemas from './schemas/tasks.js';
import type { TaskStatus } from './vocabulary.js';

export type { Json, JsonObject } from './json.js';

/** Timing as given on create; every field optional (policy defaults fill the rest). */
export type TimingInput = z.input<typeof schemas.timingInput>;

/** Fully resolved timing, as stored and returned on every task. */
export interface Timing {
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
  claimTimeoutMs: number;
  executionTimeoutMs: number | null;
  attemptDeadlineMs: number | null;
  stallTimeoutMs: number;
  /**
   * The retry backoff of this task (its type's, from the policy file's `task_types`): retry n waits
   * min(capMs, baseMs × 2^(n-1)) ± jitter. Absent: the coordinator's.
   */
  backoff?: { baseMs: number; capMs: number; jitter: number };
}

/** An error reported by an agent (or by the coordinator on its behalf). */
export interface TaskError {
  code: string;
  message: string;
  /** `false` makes the failure final at once. @default true */
  retryable: boolean;
  details?: JsonObject;
}

/** A reference to a result stored in the blob store. */
export interface ResultRef {
  /** Blob key inside the blob store. */
  key: string;
  sizeBytes: number;
  contentType: string;
  sha256: string;
}

/**
 * A blob stored for a task by its holder (`PUT /v1/tasks/{id}/blobs`), e.g. a coding agent's session
 * transcript carried to the next attempt; fetched with `GET /v1/tasks/{id}/blobs/{blobId}`.
 */
export interface BlobRef {
  id: string;
  bytes: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
  contentType: string;
}

/** The task as returned everywhere. */
export interface Task {
  id: string;
  type: string;
  status: TaskStatus;
  payload: Json;
  attempt: number;
  maxAttempts: number;
  version: number;
  agentId: string | null;
  priority: number;
  resumable: boolean;
  requires: string[];
  labels: Record<string, string>;
  idempotencyKey: string | null;
  timing: Timing;
  progress: number | null;
  phase: string | null;
  executionDone: boolean;
  checkpoint: Json | null;
  session: Json | null;
  result: Json | null;
  resultRef: ResultRef | null;
  error: TaskError | null;
  createdAt: number;
  runAt: number;
  claimedAt: number | null;
  startedAt: number | null;
  lastHeartbeatAt: number | null;
  /**
   * When the current attempt started or last reported a different progress or phase: the stall clock
   * (`timing.stallTimeoutMs`). Null before the attempt starts.
   */
  progressChangedAt: number | null;
  leaseExpiresAt: number | null;
  nextAttemptAt: number | null;
  finishedAt: number | null;
  /** True when the task will never run again by itself (docs/design.md §2). */
  final: boolean;
}

/** `POST /v1/tasks` body. */
export type CreateTaskRequest = z.input<typeof schemas.createTask>;

export interface CreateTaskResponse {
  task: Task;
  /** True when `idempotencyKey` matched an existing task (which is returned). */
  deduplicated: boolean;
}

export type CreateTasksBatchRequest = z.input<typeof schemas.createTasksBatch>;
/** `POST /v1/tasks/batch` answer; with `"return": "minimal"` it is a `CreateTasksMinimalResponse`. */
export interface CreateTasksBatchResponse {
  tasks: Task[];
}

export interface ListTasksResponse {
  tasks: Task[];
  nextCursor: string | null;
}

/** Who caused a transition. */
export type Actor = `agent:${string}` | 'coordinator' | 'admin' | 'user' | string;

/** One entry of a task's event history (the audit trail). */
export interface TaskEvent {
  seq: number;
  at: number;
  from: TaskStatus | null;
  to: TaskStatus;
  version: number;
  attempt: number;
  actor: Actor;
  reason: string;
  details: JsonObject | null;
}

/** Diagnosis reason codes (docs/protocol.md). */
export const DIAGNOSIS_CODES = [
  'no_agents_for_type',
  'agents_lost',
  'agents_busy',
  'agents_not_polling',
  'scheduled_later',
  'backoff_wait',
  'dependency_unavailable',
  'claimed_not_started',
  'heartbeat_late',
  'progress_stalled',
  'awaiting_write_back',
  'queued_behind',
  'exhausted_attempts',
  'non_retryable_error',
  'cancelled',
  'completed',
  'running_normally',
  'claimable_now',
] as const;
export type DiagnosisCode = (typeof DIAGNOSIS_CODES)[number];

export interface DiagnosisReason {
  code: DiagnosisCode;
  message: string;
  since: number | null;
  details: JsonObject;
}

export interface Diagnosis {
  taskId: string;
  status: TaskStatus;
  summary: string;
  reasons: DiagnosisReason[];
  suggestions: string[];
  at: number;
}

export interface LogLine {
  seq: number;
  at: number;
  attempt: number;
  stream: string;
  text: string;
}

export interface LogsResponse {
  lines: LogLine[];
  /** True when the per-task log cap was reached and later lines were dropped. */
  truncated?: boolean;
}

/** Agent-side writes (holder only, `version` required). */
export type StartTaskRequest = z.input<typeof schemas.startTask>;
export type TaskHeartbeatRequest = z.input<typeof schemas.taskHeartbeat>;
export type CheckpointRequest = z.input<typeof schemas.checkpoint>;
export type AppendLogsRequest = z.input<typeof schemas.appendLogs>;
export type ClaimEffectRequest = z.input<typeof schemas.claimEffect>;
export type RecordEffectRequest = z.input<typeof schemas.recordEffect>;

/**
 * `POST /v1/tasks/{id}/effects/{key}/claim`: `claimed` — run the effect now, then record it with
 * `claimId`; `done` — it ran already (in this or an earlier attempt): here is what it returned;
 * `running` — another attempt is running it: ask again later (its claim ends at `claimExpiresAt`).
 */
export type EffectClaimResponse =
  | { outcome: 'claimed'; claimId: string; claimExpiresAt: number }
  | { outcome: 'done'; result: Json | null; doneAt: number }
  | { outcome: 'running'; claimExpiresAt: number };

/**
 * `PUT /v1/tasks/{id}/effects/{key}`: `recorded` — this result is the key's; `done` — another attempt
 * recorded first (its claim had lapsed and both ran the effect): `result` is the one kept.
 */
export interface EffectRecordResponse {
  outcome: 'recorded' | 'done';
  result: Json | null;
  doneAt: number;
}
export type CompleteTaskRequest = z.input<typeof schemas.completeTask>;
export type FailTaskRequest = z.input<typeof schemas.failTask>;
export interface TaskResponse {
  task: Task;
}
