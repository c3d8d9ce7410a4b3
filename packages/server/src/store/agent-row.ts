/**
 * The `agents` and `agent_conditions` rows, the same columns in both backends, and their mapping to
 * the wire `Agent`, the watchdog's `AgentWatch` and `ConditionRecord`. Each backend reads its JSON
 * columns into values first (text in SQLite, jsonb in PostgreSQL).
 */
import type {
  Agent,
  AgentCommand,
  AgentMetrics,
  ConditionKind,
  Json,
  JsonObject,
  ReportedAgentStatus,
} from '@rouse/protocol';
import { deriveAgentStatus } from '../core/watchdog/agent-status.js';
import type { SampleRing } from '../core/watchdog/samples.js';
import type {
  AgentLifecycle,
  AgentWatch,
  ConditionKey,
  ConditionRecord,
  MetricSample,
} from './watchdog-store.js';

/** Every column the mappings read, in this order (SQL selects `a.<name>`). */
export const AGENT_COLUMN_NAMES = [
  'id',
  'agent_key',
  'incarnation',
  'agent_type',
  'name',
  'host',
  'pid',
  'task_types',
  'labels',
  'requires',
  'supervisor_id',
  'policy',
  'lifecycle',
  'reported_status',
  'reported_status_since',
  'status_message',
  'registered_at',
  'started_at',
  'last_heartbeat_at',
  'lease_expires_at',
  'heartbeat_interval_ms',
  'last_poll_at',
  'last_poll_types',
  'metrics',
  'metadata',
  'progress',
  'phase',
  'progress_changed_at',
  'ended_at',
  'open_conditions',
  'samples',
  'gaps',
] as const;

/** `a.id, a.agent_key, ...` for a query that names the agents table `a`. */
export const AGENT_COLUMNS = AGENT_COLUMN_NAMES.map((c) => `a.${c}`).join(', ');

/** An agents row with its JSON columns parsed. */
export interface AgentRow {
  id: string;
  agent_key: string | null;
  incarnation: number;
  agent_type: string;
  name: string;
  host: string | null;
  pid: number | null;
  task_types: string[];
  labels: Record<string, string>;
  requires: string[];
  supervisor_id: string | null;
  policy: string;
  lifecycle: AgentLifecycle;
  reported_status: ReportedAgentStatus;
  reported_status_since: number;
  status_message: string | null;
  registered_at: number;
  started_at: number;
  last_heartbeat_at: number | null;
  lease_expires_at: number | null;
  heartbeat_interval_ms: number;
  last_poll_at: number | null;
  last_poll_types: string[];
  metrics: AgentMetrics | null;
  metadata: JsonObject | null;
  progress: Json | null;
  phase: string | null;
  progress_changed_at: number | null;
  ended_at: number | null;
  /** `kind` or `kind taskId`, in opening order. */
  open_conditions: string[];
  /** Oldest first. */
  samples: SampleRing;
  gaps: number[];
}

/** The JSON columns (text in SQLite, where `samples` is a binary ring instead). */
export const AGENT_JSON_COLUMNS = [
  'task_types',
  'labels',
  'requires',
  'last_poll_types',
  'metrics',
  'metadata',
  'progress',
  'open_conditions',
  'gaps',
] as const;

/** `kind` or `kind taskId`: how `open_conditions` lists a condition. */
export function conditionToken(c: ConditionKey): string {
  return c.taskId === null ? c.condition : `${c.condition} ${c.taskId}`;
}

export function parseConditionToken(token: string): ConditionKey {
  const space = token.indexOf(' ');
  return space < 0
    ? { condition: token as ConditionKind, taskId: null }
    : { condition: token.slice(0, space) as ConditionKind, taskId: token.slice(space + 1) };
}

export function toSample(s: readonly (number | null)[]): MetricSample {
  return { at: s[0] as number, rssBytes: s[1] ?? null, cpuPercent: s[2] ?? null, iterationMs: s[3] ?? null };
}

/** The wire agent: its derived status from the row, its open conditions from `conditions`. */
export function toAgent(
  r: AgentRow,
  conditions: readonly ConditionRecord[],
  currentTaskIds: string[],
): Agent {
  const open = r.open_conditions.map(parseConditionToken);
  return {
    id: r.id,
    key: r.agent_key,
    incarnation: r.incarnation,
    agentType: r.agent_type,
    name: r.name,
    host: r.host,
    pid: r.pid,
    taskTypes: r.task_types,
    labels: r.labels,
    requires: r.requires,
    supervisorId: r.supervisor_id,
    policy: r.policy,
    status: deriveAgentStatus({
      lifecycle: r.lifecycle,
      reportedStatus: r.reported_status,
      openConditions: open.map((c) => c.condition),
    }),
    reportedStatus: r.reported_status,
    statusMessage: r.status_message,
    conditions: conditions.map(({ condition, since, taskId, evidence }) => ({
      condition,
      since,
      taskId,
      evidence,
    })),
    registeredAt: r.registered_at,
    startedAt: r.started_at,
    lastHeartbeatAt: r.last_heartbeat_at,
    leaseExpiresAt: r.lease_expires_at,
    heartbeatIntervalMs: r.heartbeat_interval_ms,
    lastPollAt: r.last_poll_at,
    lastPollTypes: r.last_poll_types,
    metrics: r.metrics,
    metadata: r.metadata,
    progress: r.progress,
    phase: r.phase,
    progressChangedAt: r.progress_changed_at,
    endedAt: r.ended_at,
    currentTaskIds,
  };
}

/** The columns that keep what an agent's heartbeats say of it: status, progress, samples, gaps. */
export type BeatStateColumn =
  | 'last_heartbeat_at'
  | 'reported_status'
  | 'reported_status_since'
  | 'status_message'
  | 'progress'
  | 'phase'
  | 'progress_changed_at'
  | 'samples'
  | 'gaps';

/** The columns {@link toWatch} reads. */
export type WatchRow = Pick<
  AgentRow,
  | BeatStateColumn
  | 'id'
  | 'incarnation'
  | 'agent_type'
  | 'policy'
  | 'lifecycle'
  | 'started_at'
  | 'lease_expires_at'
  | 'heartbeat_interval_ms'
  | 'metrics'
  | 'requires'
  | 'open_conditions'
>;

/** The watch state of a row; `heldTaskIds` are read beside it (the row does not list them). */
export function toWatch(r: WatchRow, heldTaskIds: string[]): AgentWatch {
  return {
    agentId: r.id,
    incarnation: r.incarnation,
    agentType: r.agent_type,
    policy: r.policy,
    lifecycle: r.lifecycle,
    startedAt: r.started_at,
    lastHeartbeatAt: r.last_heartbeat_at,
    leaseExpiresAt: r.lease_expires_at,
    heartbeatIntervalMs: r.heartbeat_interval_ms,
    reportedStatus: r.reported_status,
    reportedStatusSince: r.reported_status_since,
    statusMessage: r.status_message,
    progress: r.progress,
    phase: r.phase,
    progressChangedAt: r.progress_changed_at,
    samples: r.samples,
    gaps: r.gaps,
    iterationMs: r.metrics?.iterationMs ?? null,
    metrics: r.metrics,
    requires: r.requires,
    openConditions: r.open_conditions.map(parseConditionToken),
    heldTaskIds,
  };
}

/** Closed conditions kept per agent (the newest; older history is dropped), by both backends. */
export const CLOSED_CONDITIONS_KEPT = 200;

/** Every column the condition mapping reads (SQL selects `c.<name>`). */
export const CONDITION_COLUMNS =
  'c.seq, c.agent_id, c.incarnation, c.agent_type, c.condition, c.task_id, c.since, c.evidence, c.opened_by, c.opened_at, c.closed_at, c.close_reason';

/** An agent_conditions row with `evidence` parsed; `task_id` is '' for the agent itself. */
export interface ConditionRow {
  seq: number;
  agent_id: string;
  incarnation: number;
  agent_type: string;
  condition: ConditionKind;
  task_id: string;
  since: number;
  evidence: JsonObject;
  opened_by: string;
  opened_at: number;
  closed_at: number | null;
  close_reason: string | null;
}

export function toConditionRecord(r: ConditionRow): ConditionRecord {
  return {
    seq: Number(r.seq),
    agentId: r.agent_id,
    incarnation: r.incarnation,
    agentType: r.agent_type,
    condition: r.condition,
    taskId: r.task_id === '' ? null : r.task_id,
    since: Number(r.since),
    evidence: r.evidence,
    openedBy: r.opened_by,
    openedAt: Number(r.opened_at),
    closedAt: r.closed_at === null ? null : Number(r.closed_at),
    closeReason: r.close_reason,
  };
}

/** Commands handed out by a batch of heartbeats: each agent's, with the first input that names it. */
export type CommandsOf = (agentId: string) => AgentCommand[];
