/**
 * The task half of the Store contract: creating, claiming, running and ending tasks, their history,
 * logs, leases and result blobs. Part of `Store` (`store.ts`), with the rules written there.
 *
 * Agent writes carry `agentId` and `version`. The check order is: task exists (`not_found`), then the
 * version is current (`stale_version`, details: currentVersion, status), then the agent holds it
 * (`forbidden`), then the transition is allowed (`invalid_transition`).
 */
import type {
  Json,
  JsonObject,
  LogLine,
  ResultRef,
  Task,
  TaskError,
  TaskEvent,
  TaskStatus,
  Timing,
} from '@rouse/protocol';
import type { ResolvedBackoffOptions } from '../core/backoff.js';
import type { BlobStore, BlobStoreOptions } from './blobs.js';

/** A task to insert; the id is chosen by the caller, times by the store. */
export interface NewTask {
  id: string;
  type: string;
  payload: Json;
  idempotencyKey: string | null;
  priority: number;
  /** Epoch ms; null = now. */
  runAt: number | null;
  maxAttempts: number;
  resumable: boolean;
  requires: string[];
  labels: Record<string, string>;
  timing: Timing;
}

export interface CreatedTask {
  task: Task;
  /** True when `idempotencyKey` matched an existing task with the same type and payload. */
  deduplicated: boolean;
}

/** A task and the history entries the write appended (for the event stream). */
export interface Transitioned {
  task: Task;
  events: TaskEvent[];
}

export interface TaskQuery {
  statuses?: TaskStatus[];
  type?: string;
  agentId?: string;
  /** All must match. */
  labels?: Record<string, string>;
  /**
   * Text to look for: a task matches when it is the task's id or idempotency key exactly, or when it
   * appears, in any case, in the JSON text of the payload or of the labels (keys and values). A scan
   * of the tasks the other filters leave, newest first: for people searching, not for programs.
   */
  search?: string;
  /** @default 100 */
  limit?: number;
  /** Opaque, from a previous page's `nextCursor`. */
  cursor?: string | null;
}

/** What the dashboard's overview shows of the tasks (`taskSummary`). */
export interface TaskSummary {
  /** Every task, by type and status (rows with a count of zero are left out). */
  byTypeAndStatus: { type: string; status: TaskStatus; count: number }[];
  /** Tasks that finished since `since`: completed, and failed for good (failed or timeout, no retry left). */
  completedSince: number;
  failedSince: number;
  /** created → completed (ms) of the newest tasks completed since `since` (at most `latencySample`), ascending. */
  latenciesMs: number[];
}

export interface ClaimInput {
  agentId: string;
  types: string[];
  max: number;
  /** Also move the claimed tasks to `running` in the same transaction (two history entries each). */
  start: boolean;
  /** Skip tasks that require any of these dependencies (they are down or rate-limited). */
  unavailableDependencies?: string[];
  backoff: ResolvedBackoffOptions;
}

export interface AgentWrite {
  taskId: string;
  agentId: string;
  version: number;
}

export interface HeartbeatInput extends AgentWrite {
  progress?: number | undefined;
  phase?: string | undefined;
  executionDone?: boolean | undefined;
  /** With `executionDone`, the lease covers at least this long (write-back grace). */
  writeBackGraceMs: number;
}

/** Per-item outcome of a batched write: never throws for one bad item. */
export type Outcome<T> =
  | { ok: true; value: T }
  | { ok: false; code: string; message: string; details?: JsonObject };

export interface HeartbeatAccepted {
  taskId: string;
  leaseExpiresAt: number;
  /** Progress or phase changed with this beat. */
  progressed: boolean;
  status: TaskStatus;
  /** The stall clock after this beat (`Task.progressChangedAt`), and the task's stall threshold. */
  progressChangedAt: number | null;
  stallTimeoutMs: number;
  /** The dependencies the task requires (the watchdog's `dependency_down` looks at them). */
  requires: string[];
}

export interface CompleteAndClaimItem {
  complete: CompleteInput[];
  claim: ClaimInput;
}

export interface CompleteAndClaimResult {
  completed: Outcome<Transitioned>[];
  claimed: Transitioned[];
}

export interface CompleteInput extends AgentWrite {
  result?: Json | undefined;
  resultRef?: ResultRef | null | undefined;
}

export interface FailInput extends AgentWrite {
  error: TaskError;
  backoff: ResolvedBackoffOptions;
}

export type ExpiryReason = 'heartbeat_timeout' | 'claim_timeout' | 'attempt_deadline';

export interface ReleaseAgentTasksInput {
  agentId: string;
  /** The error code the tasks time out with (`agent_left`, `agent_replaced`, `agent_reassigned`). */
  reason: string;
  task?: { id: string; version: number };
  actor?: string;
}

export interface ExpireInput {
  taskId: string;
  version: number;
  backoff: ResolvedBackoffOptions;
}

/** A lease the coordinator must watch. */
export interface LeaseEntry {
  taskId: string;
  version: number;
  status: TaskStatus;
  leaseExpiresAt: number;
  executionDone: boolean;
  hasResultRef: boolean;
  /**
   * The task's `timing.heartbeatTimeoutMs`: after a coordinator restart each loaded lease gets this
   * much grace before it may expire (docs/design.md §3), without a read per task.
   */
  heartbeatTimeoutMs: number;
}

export interface ActiveLeasesQuery {
  /**
   * Only leases with `leaseExpiresAt <= dueBy` (the safety sweep asks for overdue ones). An
   * optimisation: callers filter again, so returning more is correct, only slower.
   */
  dueBy?: number;
  /**
   * Only tasks in these lease shards (`shardOf(taskId)`, see `lease-shards.ts`). Omitted:
   * every shard (a single coordinator owns them all).
   */
  shards?: { ids: number[]; count: number };
}

export interface LogAppendResult {
  accepted: number;
  /** The per-task cap was reached; later lines were dropped. */
  truncated: boolean;
}

/** Numbers for the diagnosis. */
export interface QueueStats {
  /** Claimable tasks of the same type that would be claimed before this one. */
  ahead: number;
}

export interface TaskStore {
  /**
   * Insert tasks, all or nothing. An `idempotencyKey` already present returns the existing task
   * (`deduplicated: true`) when type and payload are equal, else throws `idempotency_conflict`.
   */
  createTasks(tasks: NewTask[]): Promise<CreatedTask[]>;
  getTask(id: string): Promise<Task | null>;
  listTasks(query: TaskQuery): Promise<{ tasks: Task[]; nextCursor: string | null }>;
  listTaskEvents(taskId: string): Promise<TaskEvent[]>;
  /** Counts for the dashboard's overview (a scan of the tasks; not for the hot path). */
  taskSummary(query: { since: number; latencySample: number }): Promise<TaskSummary>;

  /**
   * Atomically claim up to `max` claimable tasks of `types`, highest priority first, then oldest:
   * `created` with `runAt <= now`, or `failed`/`timeout` with `nextAttemptAt <= now`.
   * Each claimed task gets `version + 1`, `attempt + 1`, `agentId`, a lease of `claimTimeoutMs`
   * (or, with `start`, status `running` and a lease of `heartbeatTimeoutMs`). Concurrent claims never
   * return the same task for the same attempt.
   */
  claimTasks(input: ClaimInput): Promise<Transitioned[]>;
  /** claimed → running; lease = heartbeatTimeoutMs. */
  startTask(input: AgentWrite): Promise<Transitioned>;
  /** Renew leases and record progress. One transaction for the whole batch; one outcome per item. */
  recordHeartbeats(beats: HeartbeatInput[]): Promise<Outcome<HeartbeatAccepted>[]>;
  saveCheckpoint(input: AgentWrite & { state?: Json | undefined; session?: Json | undefined }): Promise<void>;
  /** Append log lines to the current attempt; drops lines past `maxBytesPerTask` in total. */
  appendLogs(
    input: AgentWrite & { lines: { stream: string; text: string }[]; maxBytesPerTask: number },
  ): Promise<LogAppendResult>;
  readLogs(taskId: string, afterSeq: number, limit: number): Promise<LogLine[]>;
  /** Record an uploaded blob as the holder's result (does not complete the task). */
  setResultRef(input: AgentWrite & { resultRef: ResultRef }): Promise<void>;

  /**
   * running → completed, in one transaction for the batch. Idempotent per version: completing a task
   * already completed at that version returns it unchanged (`ok: true`).
   */
  completeTasks(items: CompleteInput[]): Promise<Outcome<Transitioned>[]>;
  /**
   * Complete-and-claim-next in ONE transaction: `completeTasks(complete)`, then `claimTasks(claim)`,
   * with the same rules and outcomes as the two calls (a refused completion does not stop the claim).
   * A claim that carries completions then costs one commit instead of two. Optional: without it the
   * coordinator makes the two calls.
   */
  completeAndClaim?(complete: CompleteInput[], claim: ClaimInput): Promise<CompleteAndClaimResult>;
  /**
   * Several `completeAndClaim`s (of different requests) in ONE transaction, in order, one result per
   * item, each as `completeAndClaim` alone would give it. Offered by a store whose writes take turns
   * (SQLite): the requests of one event-loop turn then share a commit. Optional: without it each goes
   * alone (PostgreSQL's concurrent transactions share commits in the server).
   */
  completeAndClaimMany?(items: CompleteAndClaimItem[]): Promise<CompleteAndClaimResult[]>;
  /**
   * running → failed. With attempts left and a retryable error, `nextAttemptAt = now + backoff(attempt)`;
   * otherwise final. Idempotent per version.
   */
  failTask(input: FailInput): Promise<Transitioned>;
  /**
   * claimed|running → timeout, only if this version's lease has passed by the store's clock (so an
   * early or duplicate call is harmless). Schedules the retry in the same write. Returns null when
   * nothing was due (lease renewed, version moved on, or already final).
   */
  expireLease(input: ExpireInput): Promise<(Transitioned & { reason: ExpiryReason }) | null>;
  /**
   * Complete a task whose agent reported `executionDone` and uploaded a result blob but never wrote
   * back (docs/design.md §5). Conditional on version; null when not applicable.
   */
  completeFromResultRef(input: { taskId: string; version: number }): Promise<Transitioned | null>;
  /** Any non-final state → cancelled. Throws `invalid_transition` for final tasks. */
  cancelTask(input: { taskId: string; reason: string; actor: string }): Promise<Transitioned>;
  /**
   * A final `failed`/`timeout` task gets one more attempt now (`maxAttempts` grows if exhausted).
   * Throws `invalid_transition` for any other state.
   */
  retryTask(input: { taskId: string; actor: string }): Promise<Transitioned>;
  /**
   * The agent's held tasks → timeout at once, retried without backoff (a graceful leave, a replaced
   * incarnation) — or only `task`, if it is still held by the agent at that version (a reassignment:
   * a stale holder's writes are then refused). `actor` defaults to the agent.
   */
  releaseAgentTasks(input: ReleaseAgentTasksInput): Promise<Transitioned[]>;

  /** Every lease held right now (claimed or running), for the coordinator's timers. */
  activeLeases(query?: ActiveLeasesQuery): Promise<LeaseEntry[]>;
  /**
   * The earliest moment after `after` (by default the store's now) at which a task of `types` (any
   * when omitted) becomes claimable after a delay (`runAt`, a retry's backoff), or null. A moment
   * between `after` and now is returned too: a claim that found nothing asks from when it looked, so
   * a task that became due in between is not missed.
   */
  nextClaimableAt(types?: string[], after?: number): Promise<number | null>;
  /** How many claimable tasks of the same type would be claimed before this one. */
  queueStats(taskId: string): Promise<QueueStats>;

  /**
   * A blob store inside this store, offered by stores that several coordinators share (PostgreSQL):
   * a result uploaded through one coordinator is then read through any. Absent: the coordinator keeps
   * blobs as files in its data directory.
   */
  createBlobStore?(options: BlobStoreOptions): BlobStore;
}
