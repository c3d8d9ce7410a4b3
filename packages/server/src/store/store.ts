/**
 * The Store contract: domain operations on tasks, their history, logs and agents. No connection,
 * transaction or SQL types appear here; SQLite and PostgreSQL implement it and pass one shared
 * contract suite (`contract.ts`).
 *
 * Rules every implementation keeps:
 * - Every transition is one atomic conditional write (compare-and-set on status and version) and
 *   appends its event to the task's history in the same transaction. Never read-check-write.
 * - Transitions are checked against the core table (`core/transitions.ts`).
 * - Time comes from the store's clock: the injected `Clock` for SQLite, the database's `now()` for
 *   PostgreSQL. Every `...At` written is that clock's.
 * - Errors are `RouseError`s built by one function per backend family so both backends produce the
 *   same codes: `not_found`, `stale_version`, `invalid_transition`, `forbidden`, `idempotency_conflict`,
 *   `unavailable`.
 *
 * Agent writes carry `agentId` and `version`. The check order is: task exists (`not_found`), then the
 * version is current (`stale_version`, details: currentVersion, status), then the agent holds it
 * (`forbidden`), then the transition is allowed (`invalid_transition`).
 */
import type {
  Agent,
  AgentCommand,
  AgentMetrics,
  AgentStatus,
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
import type {
  AnnounceCoordinatorInput,
  ClaimableNotice,
  CoordinatorPresence,
  DependencyRecord,
  ShardLease,
  StreamNotice,
  TransitionRef,
} from './coordination.js';

export type * from './coordination.js';

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
  /** @default 100 */
  limit?: number;
  /** Opaque, from a previous page's `nextCursor`. */
  cursor?: string | null;
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
   * much grace before it may expire (DESIGN.md §3), without a read per task.
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

export interface NewAgent {
  id: string;
  agentType: string;
  name: string;
  host: string | null;
  pid: number | null;
  taskTypes: string[];
  labels: Record<string, string>;
  /** sha256 (hex) of the agent's bearer token. */
  tokenHash: string;
}

/** A command for an agent, kept until the agent's next heartbeat takes it (on any coordinator). */
export interface QueueAgentCommandInput {
  agentId: string;
  command: AgentCommand;
  /** Keep at most this many queued commands for the agent; the oldest beyond it are dropped. */
  keep: number;
  /**
   * Commands of any agent queued longer ago than this are dropped too: their agents never came back
   * for them (an agent that restarts registers anew).
   */
  maxAgeMs: number;
}

export interface AgentHeartbeatInput {
  agentId: string;
  status?: AgentStatus | undefined;
  metrics?: AgentMetrics | undefined;
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

export interface Store {
  readonly kind: 'sqlite' | 'postgres';

  /** The store's clock (see the rules above). */
  now(): Promise<number>;
  /** Throws `unavailable` when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;

  // ── tasks ──────────────────────────────────────────────────────────────────────────────────────

  /**
   * Insert tasks, all or nothing. An `idempotencyKey` already present returns the existing task
   * (`deduplicated: true`) when type and payload are equal, else throws `idempotency_conflict`.
   */
  createTasks(tasks: NewTask[]): Promise<CreatedTask[]>;
  getTask(id: string): Promise<Task | null>;
  listTasks(query: TaskQuery): Promise<{ tasks: Task[]; nextCursor: string | null }>;
  listTaskEvents(taskId: string): Promise<TaskEvent[]>;

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
  completeAndClaim?(
    complete: CompleteInput[],
    claim: ClaimInput,
  ): Promise<{ completed: Outcome<Transitioned>[]; claimed: Transitioned[] }>;
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
   * back (DESIGN.md §5). Conditional on version; null when not applicable.
   */
  completeFromResultRef(input: { taskId: string; version: number }): Promise<Transitioned | null>;
  /** Any non-final state → cancelled. Throws `invalid_transition` for final tasks. */
  cancelTask(input: { taskId: string; reason: string; actor: string }): Promise<Transitioned>;
  /**
   * A final `failed`/`timeout` task gets one more attempt now (`maxAttempts` grows if exhausted).
   * Throws `invalid_transition` for any other state.
   */
  retryTask(input: { taskId: string; actor: string }): Promise<Transitioned>;
  /** Graceful leave: the agent's held tasks → timeout at once, retried without backoff. */
  releaseAgentTasks(input: { agentId: string; reason: string }): Promise<Transitioned[]>;

  /** Every lease held right now (claimed or running), for the coordinator's timers. */
  activeLeases(query?: ActiveLeasesQuery): Promise<LeaseEntry[]>;
  /** The earliest future moment a task of `types` (any when omitted) becomes claimable, or null. */
  nextClaimableAt(types?: string[]): Promise<number | null>;
  /** How many claimable tasks of the same type would be claimed before this one. */
  queueStats(taskId: string): Promise<QueueStats>;

  // ── agents ─────────────────────────────────────────────────────────────────────────────────────

  registerAgent(agent: NewAgent): Promise<Agent>;
  getAgent(id: string): Promise<Agent | null>;
  /** Resolve a bearer token (by its sha256) to its agent; null if unknown or the agent left. */
  getAgentByTokenHash(tokenHash: string): Promise<Agent | null>;
  listAgents(filter?: { taskType?: string; statuses?: AgentStatus[] }): Promise<Agent[]>;
  /**
   * Agent-level heartbeats of several agents in one write: each agent's heartbeat time (and its
   * status and metrics when given) is recorded and its queued commands are taken, oldest first —
   * each command is returned by exactly one call. One result per input, in order: the agent's
   * commands, or null when no such agent exists. An agent named twice gets its commands with its
   * first input (and the batch's last status and metrics for it win).
   */
  recordAgentHeartbeats(inputs: readonly AgentHeartbeatInput[]): Promise<(AgentCommand[] | null)[]>;
  /** Remember that the agent asked for work (for "why isn't my task running?"). */
  recordPoll(input: { agentId: string; types: string[] }): Promise<void>;
  setAgentStatus(agentId: string, status: AgentStatus): Promise<void>;
  /**
   * Queue a command for an agent. A command naming a task is not queued twice while the first is
   * still waiting (same agent, type and task).
   */
  queueAgentCommand(input: QueueAgentCommandInput): Promise<void>;
  /** Drop every command queued for the agent (it left). */
  clearAgentCommands(agentId: string): Promise<void>;
  /** Save a dependency's state (replacing the previous one); returns it with its new version. */
  saveDependency(record: Omit<DependencyRecord, 'version'>): Promise<DependencyRecord>;
  /** Every dependency ever reported, by name. */
  listDependencies(): Promise<DependencyRecord[]>;

  // ── several coordinators (DESIGN.md §6 "Leases for coordinators", §8) ────────────────────────────

  /**
   * Take or renew shard leases for `ownerId`: renews the unexpired ones it holds, then takes free or
   * expired ones (never-held, released or lapsed — its own lapsed ones too), lowest shard first, until
   * it holds `want` below `shardCount`; all by the store clock, each until now + `ttlMs`. Renewing
   * never goes past `want` by dropping shards: holding more is the caller's to fix
   * (`releaseShardLeases` with a list). Returns every shard it holds after the call, in shard order.
   * A shard taken gets `epoch + 1` (a new shard starts at 1); a renewed one keeps its epoch. The take
   * is conditional on the row still being expired, so a shard never has two live owners.
   */
  acquireShardLeases(input: {
    ownerId: string;
    shardCount: number;
    want: number;
    ttlMs: number;
  }): Promise<ShardLease[]>;
  /**
   * Give up shards `ownerId` holds: they expire now, so any coordinator takes them at its next
   * `acquireShardLeases`. With `shards`, only those (balancing: a coordinator above its share hands
   * the excess to a newcomer; shards it does not hold are left alone) and its presence stays. Without,
   * every shard it holds and its presence too (graceful stop), so the others' shares grow at once.
   */
  releaseShardLeases(ownerId: string, shards?: readonly number[]): Promise<void>;
  /** All shard leases, in shard order (for status pages and tests). */
  listShardLeases(): Promise<ShardLease[]>;
  /**
   * Record `ownerId` as a live coordinator until now + `ttlMs` (store clock; call it with each shard
   * renewal, with the shard TTL, so presence and shards lapse together) and return every live one —
   * presence not expired, the caller included — ordered by id: they share the shards. Presences that
   * expired are forgotten. With `instance`, a live presence under `ownerId` written by another
   * instance is left alone and the call fails with `conflict` (see `AnnounceCoordinatorInput`).
   */
  announceCoordinator(input: AnnounceCoordinatorInput): Promise<CoordinatorPresence[]>;
  /** The live coordinators (presence not expired), ordered by id. Reads only. */
  listCoordinators(): Promise<CoordinatorPresence[]>;
  /**
   * Publish a notice to every coordinator sharing this store (PostgreSQL `NOTIFY`); SQLite delivers
   * it to local subscribers only. Stores may also publish on their own after writes that make work
   * claimable.
   */
  publishClaimable(notice: ClaimableNotice): Promise<void>;
  /** Listen for notices from any coordinator; returns the unsubscribe function. */
  onClaimable(listener: (notice: ClaimableNotice) => void): () => void;
  /**
   * Publish a stream notice to every coordinator sharing this store (PostgreSQL `NOTIFY` on a channel
   * of its own, split into several when long); SQLite delivers it to local subscribers only.
   */
  publishStreamNotice(notice: StreamNotice): Promise<void>;
  /** Listen for stream notices from any coordinator; returns the unsubscribe function. */
  onStreamNotices(listener: (notice: StreamNotice) => void): () => void;
  /** The tasks and history entries `refs` name, in their order; ones that do not exist are left out. */
  readTransitions(refs: TransitionRef[]): Promise<{ task: Task; event: TaskEvent }[]>;

  // ── result blobs ───────────────────────────────────────────────────────────────────────────────

  /**
   * A blob store inside this store, offered by stores that several coordinators share (PostgreSQL):
   * a result uploaded through one coordinator is then read through any. Absent: the coordinator keeps
   * blobs as files in its data directory.
   */
  createBlobStore?(options: BlobStoreOptions): BlobStore;
}
