/**
 * The coordinator's service facade: everything the HTTP API (and in-process callers such as the CLI's
 * `demo`) may ask of it. Routes translate HTTP into these calls and contain no business rules.
 *
 * `Caller` is who is asking, already authenticated by the API: services enforce what that caller may
 * do (an agent may only write to tasks it holds, and only act as itself).
 */
import type {
  Agent,
  AgentCommand,
  AgentDiagnosis,
  AgentHeartbeatRequest,
  AgentHeartbeatResponse,
  AgentSnapshot,
  AgentStatus,
  Alert,
  AlertsResponse,
  AppendLogsRequest,
  BlobRef,
  CheckPoliciesResponse,
  CheckpointRequest,
  ClaimEffectRequest,
  ClaimRequest,
  ClaimResponse,
  CommandAcksRequest,
  CommandAcksResponse,
  CompleteTaskRequest,
  ConditionKind,
  CreateTaskRequest,
  CreateTaskResponse,
  DependencyReport,
  DependencyState,
  Diagnosis,
  EffectClaimResponse,
  EffectRecordResponse,
  FailTaskRequest,
  Intervention,
  InterventionsResponse,
  JsonObject,
  LogsResponse,
  NextCommandsRequest,
  NextCommandsResponse,
  PoliciesResponse,
  PutSnapshotRequest,
  RecordEffectRequest,
  RegisterAgentRequest,
  RegisterAgentResponse,
  ResultRef,
  SnapshotWritten,
  StreamEvent,
  Task,
  TaskEvent,
  TaskHeartbeatRequest,
  WriteOutcome,
} from '@rouse/protocol';
import type {
  AgentQuery,
  AlertQuery,
  ConditionRecord,
  InterventionQuery,
  MetricSample,
  TaskQuery,
  TaskSummary,
} from '../store/store.js';
import type { DeliveryOutcome } from './alerts/alerts.js';
import type { Caller, PresentedToken } from './auth.js';
import type { DashboardSessions } from './dashboard-sessions.js';
import type { SubscribeOptions } from './event-bus.js';

export type { Caller } from './auth.js';

/** A command as queued, and the manual intervention it opened (wake, restart, terminate), if any. */
export interface SentCommand {
  commandId: string;
  intervention: Intervention | null;
}

export interface WatchdogGauges {
  agentsByStatus: Record<AgentStatus, number>;
  openConditions: Record<ConditionKind, number>;
  evaluations: number;
  evaluationSeconds: number;
  /** Recovery ladder steps run by this coordinator, and the time spent in them (seconds). */
  ladderSteps: number;
  ladderSeconds: number;
  /** This coordinator's alert delivery attempts by channel and outcome. */
  alertNotifications: { channel: string; outcome: DeliveryOutcome; count: number }[];
}

export interface StoredResult {
  /** Inline JSON result, or a readable blob. */
  inline?: unknown;
  blob?: { ref: ResultRef; stream: NodeJS.ReadableStream };
}

/** One dependency's current state, as `GET /v1/dependencies` returns it (docs/protocol.md). */
export interface DependencyStatus {
  name: string;
  state: DependencyState;
  /** For `rate_limited`/`down` with a retry hint: when it is expected back (epoch ms), else null. */
  until: number | null;
  /** `agent:<id>`, `admin` or `probe`. */
  reportedBy: string | null;
  /** When the current state began (epoch ms). */
  since: number;
  message: string | null;
}

export interface Coordinator {
  /** Load leases from the store, arm timers (with restart grace) and start the safety sweep. */
  start(): Promise<void>;
  /** Stop timers and wake every long-poll (they return empty). Does not close the store. */
  stop(): Promise<void>;

  /** Resolve a bearer token to a caller, or null. */
  authenticate(token: string | PresentedToken): Promise<Caller | null>;

  createTask(caller: Caller, req: CreateTaskRequest): Promise<CreateTaskResponse>;
  /** All or nothing; each task with whether its idempotency key matched (then it is that task). */
  createTasks(caller: Caller, reqs: CreateTaskRequest[]): Promise<CreateTaskResponse[]>;
  getTask(caller: Caller, id: string): Promise<Task>;
  listTasks(caller: Caller, query: TaskQuery): Promise<{ tasks: Task[]; nextCursor: string | null }>;
  listTaskEvents(caller: Caller, id: string): Promise<TaskEvent[]>;
  diagnose(caller: Caller, id: string): Promise<Diagnosis>;
  readLogs(caller: Caller, id: string, afterSeq: number): Promise<LogsResponse>;
  /** Resolves when a line after `afterSeq` exists or the task is final, or `signal` aborts. */
  waitForLogs(id: string, afterSeq: number, signal: AbortSignal): Promise<void>;
  getResult(caller: Caller, id: string): Promise<StoredResult>;
  cancelTask(caller: Caller, id: string, reason: string | undefined): Promise<Task>;
  retryTask(caller: Caller, id: string): Promise<Task>;

  // holder writes (agent token or admin)
  startTask(caller: Caller, id: string, version: number): Promise<Task>;
  heartbeatTask(caller: Caller, id: string, req: TaskHeartbeatRequest): Promise<WriteOutcome>;
  checkpointTask(caller: Caller, id: string, req: CheckpointRequest): Promise<void>;
  /** Claim an effect key of a running task for this attempt (see `effect-keys.ts`). */
  claimEffect(caller: Caller, id: string, key: string, req: ClaimEffectRequest): Promise<EffectClaimResponse>;
  /** Record what the effect of a claimed key returned. */
  recordEffect(
    caller: Caller,
    id: string,
    key: string,
    req: RecordEffectRequest,
  ): Promise<EffectRecordResponse>;
  /** Give a claim back (the effect failed). */
  releaseEffect(caller: Caller, id: string, key: string, claimId: string): Promise<{ released: boolean }>;
  /** Delete the expired effect keys now (the coordinator also does it every `effectSweepIntervalMs`). */
  sweepEffectsNow(): Promise<number>;

  // agent snapshots (docs/design.md "Snapshots"; `agent-snapshots.ts`)
  /** Store a full snapshot of the agent (its own token, or admin). */
  putSnapshot(caller: Caller, agentId: string, req: PutSnapshotRequest): Promise<SnapshotWritten>;
  /** Apply a JSON merge patch to the agent's live snapshot; `404` when there is none. */
  patchSnapshot(caller: Caller, agentId: string, patch: JsonObject, ttlMs?: number): Promise<SnapshotWritten>;
  /** The agent's current snapshot, composed (admin, read-only, or the agent itself); `404` when none. */
  getSnapshot(caller: Caller, agentId: string): Promise<AgentSnapshot>;
  /** Delete the expired snapshots and their blobs now (also done every `snapshotSweepIntervalMs`). */
  sweepSnapshotsNow(): Promise<number>;
  appendLogs(
    caller: Caller,
    id: string,
    req: AppendLogsRequest,
  ): Promise<{ accepted: number; truncated: boolean }>;
  uploadResult(
    caller: Caller,
    id: string,
    version: number,
    contentType: string,
    body: NodeJS.ReadableStream | Buffer,
  ): Promise<ResultRef>;
  /** Store bytes for the task (its holder): `PUT /v1/tasks/{id}/blobs`. */
  uploadTaskBlob(
    caller: Caller,
    id: string,
    version: number,
    contentType: string,
    body: NodeJS.ReadableStream | Buffer,
  ): Promise<BlobRef>;
  /** A blob stored for the task, for its current holder or a reader: `GET /v1/tasks/{id}/blobs/{blobId}`. */
  getTaskBlob(
    caller: Caller,
    id: string,
    blobId: string,
  ): Promise<{ ref: BlobRef; stream: NodeJS.ReadableStream }>;
  completeTask(caller: Caller, id: string, req: CompleteTaskRequest): Promise<Task>;
  failTask(caller: Caller, id: string, req: FailTaskRequest): Promise<Task>;

  // agents
  registerAgent(caller: Caller, req: RegisterAgentRequest): Promise<RegisterAgentResponse>;
  /** Long-poll claim; resolves early when `signal` aborts (client went away). */
  claim(caller: Caller, agentId: string, req: ClaimRequest, signal?: AbortSignal): Promise<ClaimResponse>;
  /** The agent takes its queued commands, waiting up to `waitMs` for one (a supervisor's long-poll). */
  nextCommands(
    caller: Caller,
    agentId: string,
    req: NextCommandsRequest,
    signal?: AbortSignal,
  ): Promise<NextCommandsResponse>;
  /** The agent (or a supervisor) answers commands it took, at once rather than with its next heartbeat. */
  acknowledgeCommands(caller: Caller, agentId: string, req: CommandAcksRequest): Promise<CommandAcksResponse>;
  agentHeartbeat(
    caller: Caller,
    agentId: string,
    req: AgentHeartbeatRequest,
  ): Promise<AgentHeartbeatResponse>;
  leave(caller: Caller, agentId: string): Promise<void>;
  getAgent(caller: Caller, agentId: string): Promise<Agent>;
  /** Agents in registration order, filtered in the store, a page at a time with `limit`. */
  listAgents(caller: Caller, query?: AgentQuery): Promise<{ agents: Agent[]; nextCursor: string | null }>;
  /** Why the agent is in its status (`GET /v1/agents/{id}/diagnosis`). */
  diagnoseAgent(caller: Caller, agentId: string): Promise<AgentDiagnosis>;
  /**
   * Queue a command for the agent (admin); `wake`, `restart` and `terminate` are recorded as a manual
   * intervention, ended by the agent's acknowledgement.
   */
  sendCommand(caller: Caller, agentId: string, command: AgentCommand): Promise<SentCommand>;
  /** Interventions newest first, filtered, a page at a time (`GET /v1/interventions`). */
  listInterventions(caller: Caller, query: InterventionQuery): Promise<InterventionsResponse>;
  getIntervention(caller: Caller, id: string): Promise<Intervention>;
  /** Alerts newest first, by state, a page at a time (`GET /v1/alerts`). */
  listAlerts(caller: Caller, query: AlertQuery): Promise<AlertsResponse>;
  getAlert(caller: Caller, id: string): Promise<Alert>;
  /** The conditions of one agent or all, newest first (open and closed). */
  listConditions(
    caller: Caller,
    query: { agentId?: string; open?: boolean; limit?: number },
  ): Promise<ConditionRecord[]>;

  /** Agents by derived status and open conditions by kind (the store's totals), and this coordinator's detector work. */
  watchdogGauges(): Promise<WatchdogGauges>;

  // policies (docs/design.md §6.3)
  policies(caller: Caller): Promise<PoliciesResponse>;
  /** Validate a policy file's text without applying it. */
  checkPolicies(caller: Caller, source: string, file: string): Promise<CheckPoliciesResponse>;

  // dependencies (docs/design.md §6)
  listDependencies(caller: Caller): Promise<DependencyStatus[]>;
  /** `POST /v1/dependencies/{name}/reports` (admin or agent token). */
  reportDependency(caller: Caller, report: DependencyReport): Promise<DependencyStatus>;

  /**
   * Subscribe to the live event stream; returns the unsubscribe function. With `everyCoordinator`,
   * also the transitions other coordinators of the store make (see event-relay.ts).
   */
  subscribe(listener: (event: StreamEvent) => void, options?: SubscribeOptions): () => void;
  /** `readyz`: throws `unavailable` when the store cannot be reached. */
  ready(): Promise<void>;

  // the dashboard (docs/design.md "The dashboard"; `dashboard-sessions.ts`)
  /** The coordinator's clock now (epoch ms; follows the store's clock). */
  now(): number;
  /** Browser sign-in: one-time login codes and sessions. */
  readonly dashboard: DashboardSessions;
  /**
   * What the dashboard draws for an agent: its recent heartbeat gaps (kept for adaptive policies)
   * and its spaced metric samples, oldest first; null for an unknown agent.
   */
  agentHistory(caller: Caller, agentId: string): Promise<{ gaps: number[]; samples: MetricSample[] } | null>;
  /** The metric samples of each of `agentIds` (oldest first), for the Agents list; unknown ids are left out. */
  agentSamples(caller: Caller, agentIds: readonly string[]): Promise<Map<string, MetricSample[]>>;
  /** The overview's task counts: by type and status, and what finished in the `windowMs` before now. */
  taskSummary(caller: Caller, windowMs: number): Promise<TaskSummary & { since: number }>;
}
