/**
 * Watchdog wire types (docs/protocol.md "The watchdog"): conditions the detectors open on agents, the
 * agent diagnosis, and the policies in force.
 *
 * Glossary:
 * - condition: something wrong with an agent that a detector saw, open from `since` until it clears,
 *   with the evidence that opened it;
 * - policy: per agent type, the heartbeat timing, stall detection, resource limits and recovery
 *   ladder (a YAML file; durations in seconds or with units there, milliseconds on the wire).
 */
import type { z } from 'zod';
import type * as schemas from './schemas/watchdog.js';
import type { JsonObject } from './task.js';
import type { AgentStatus, InterventionState } from './vocabulary.js';

/**
 * What the detectors see (docs/design.md §6.2):
 * - `heartbeat_timeout`: the agent's lease ran out (it is `lost`);
 * - `progress_stalled`: heartbeats arrive but its progress (or a held task's) has not moved for the
 *   stall threshold;
 * - `dependency_down`: a dependency it needs is down or rate-limited;
 * - `resource_runaway`: memory above its limit or rising steadily, CPU pinned without progress, or an
 *   iteration far slower than its type's baseline;
 * - `error_persisting`: it has reported `error` for longer than its policy allows.
 */
export const CONDITION_KINDS = [
  'heartbeat_timeout',
  'progress_stalled',
  'dependency_down',
  'resource_runaway',
  'error_persisting',
] as const;
export type ConditionKind = (typeof CONDITION_KINDS)[number];

export interface AgentCondition {
  condition: ConditionKind;
  /** When it opened (the coordinator's clock). */
  since: number;
  /** The held task it is about (a task whose progress stalled), else null. */
  taskId: string | null;
  /** What the detector saw: times in epoch ms, durations in ms, sizes in bytes. */
  evidence: JsonObject;
}

/** A condition as recorded, open or closed (`GET /v1/agents/{id}/conditions`, newest first). */
export interface AgentConditionRecord extends AgentCondition {
  /** Grows with every condition opened (any agent): the history's order. */
  seq: number;
  agentId: string;
  /** The incarnation it was seen on. */
  incarnation: number;
  agentType: string;
  /** `coordinator:<id>` (a detector on that coordinator) or `admin`. */
  openedBy: string;
  /**
   * When it was recorded. `since` is when it became true (a stall's threshold passing, say): the
   * difference is how long detection took.
   */
  openedAt: number;
  /** When it closed, or null while it is open. */
  closedAt: number | null;
  /** Why it closed (`progress moved`, `heartbeats resumed`, …). */
  closeReason: string | null;
}

export interface AgentConditionsResponse {
  conditions: AgentConditionRecord[];
}

/** What a recovery rung (or a person) does to an agent (docs/design.md §6.4). */
export const INTERVENTION_ACTIONS = [
  'wake',
  'send_signal',
  'snapshot_and_restart',
  'reassign',
  'alert',
  'terminate',
] as const;
export type InterventionAction = (typeof INTERVENTION_ACTIONS)[number];

/** What an intervention answers: a condition, the ladder running out (`recovery_failed`), or a person (`manual`). */
export type InterventionTrigger = ConditionKind | 'recovery_failed' | 'manual';

/** One step taken to recover an agent, by the ladder or by a person, with its evidence. */
export interface Intervention {
  id: string;
  agentId: string;
  /** The incarnation it acted on. */
  incarnation: number;
  /** The held task it is about (a stalled task, a reassignment), else null. */
  taskId: string | null;
  condition: InterventionTrigger;
  action: InterventionAction;
  /** The ladder rung (0-based) it ran, or null for a manual one. */
  rung: number | null;
  /** Which attempt of that rung (from 1). */
  attempt: number;
  state: InterventionState;
  /** Why it was taken, then why it ended. */
  reason: string;
  /** What it acted on: the condition's evidence, the last metrics, the last log lines. */
  evidence: JsonObject;
  /** `coordinator:<id>` or `admin`. */
  actor: string;
  /** The command it sent the agent (its acknowledgement ends it), if any. */
  commandId: string | null;
  /** The coordinator that acted, and its epoch of the agent's lease shard (null for a manual one). */
  coordinatorId: string | null;
  shardEpoch: number | null;
  startedAt: number;
  endedAt: number | null;
}

/** Reason codes of an agent's diagnosis: its conditions, and the plain states. */
export const AGENT_DIAGNOSIS_CODES = [
  ...CONDITION_KINDS,
  'left',
  'terminated',
  'terminating',
  'reported_error',
  'never_heartbeat',
  'in_quiet_period',
  'healthy',
] as const;
export type AgentDiagnosisCode = (typeof AGENT_DIAGNOSIS_CODES)[number];

export interface AgentDiagnosisReason {
  code: AgentDiagnosisCode;
  message: string;
  since: number | null;
  details: JsonObject;
}

/** `GET /v1/agents/{id}/diagnosis`: why the agent is in its status. */
/**
 * Where the recovery ladder stands for the agent: `idle` (nothing to do), `waiting` (a condition has not
 * held for the policy's `for` yet), `acting` (an attempt is under way), `held` (an attempt waits out a
 * dependency outage), `exhausted` (it ran out: left for a person), `none` (no rung answers an open condition).
 */
export const RECOVERY_STATES = ['idle', 'waiting', 'acting', 'held', 'exhausted', 'none'] as const;
export type RecoveryState = (typeof RECOVERY_STATES)[number];

export interface AgentRecovery {
  state: RecoveryState;
  /** One sentence on it. */
  message: string;
  /** The attempts under way, then the last ended ones (newest first, at most 5). */
  interventions: Intervention[];
}

export interface AgentDiagnosis {
  agentId: string;
  status: AgentStatus;
  summary: string;
  reasons: AgentDiagnosisReason[];
  suggestions: string[];
  /** The recovery ladder's part. */
  recovery: AgentRecovery;
  at: number;
}

/** An error in a policy file, where it is. */
export interface PolicyError {
  file: string;
  /** 1-based; 0 when the error is about the whole file. */
  line: number;
  column: number;
  /** Dotted path of the field (`policies.0.heartbeat.expected_interval`), or "" for the file. */
  path: string;
  message: string;
}

/** A policy as the coordinator applies it (durations in ms, sizes in bytes). */
export interface PolicyView {
  name: string;
  agentType: string;
  heartbeat: {
    expectedIntervalMs: number;
    timeoutFactor: number;
    /** Phi-accrual suspicion over the agent's own gaps (never before `minTimeoutMs`). */
    adaptive: boolean;
    phiThreshold: number;
    minTimeoutMs: number;
  };
  startupTimeoutMs: number;
  quietPeriodMs: number;
  forMs: number;
  stallDetection: { enabled: boolean; progressField: string | null; stallThresholdMs: number };
  resources: {
    rssLimitBytes: number | null;
    rssGrowthBytesPerMin: number | null;
    rssWindowMs: number;
    minFit: number;
    cpuPercent: number | null;
    cpuWindowMs: number;
    iterationFactor: number | null;
    maxIterationMs: number | null;
    minBaselineSamples: number;
  };
  errorTimeoutMs: number | null;
  dependencies: string[];
  recoveryActions: JsonObject[];
}

/** `GET /v1/policies`. */
export interface PoliciesResponse {
  /** The file they came from, or null (built-in defaults). */
  source: string | null;
  loadedAt: number;
  policies: PolicyView[];
  /** Task timing defaults by task type (a `timing` object as on create, plus attempts and backoff). */
  taskTypes: Record<string, JsonObject>;
  /** The last reload that was refused (the policies above stayed in force), or null. */
  lastError: { at: number; errors: PolicyError[] } | null;
}

export type CheckPoliciesRequest = z.input<typeof schemas.checkPolicies>;

/** `POST /v1/policies/check`: a 200 whether or not the file is valid. */
export interface CheckPoliciesResponse {
  valid: boolean;
  errors: PolicyError[];
  /** The policies the file defines, when valid. */
  policies: PolicyView[];
}

/** `GET /v1/interventions`: newest first. */
export interface InterventionsResponse {
  interventions: Intervention[];
  /** Pass as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}

/** `POST /v1/agents/{id}/commands`: the command's id, and the manual intervention it opened (or null). */
export interface SendCommandResponse {
  ok: true;
  commandId: string;
  intervention: Intervention | null;
}
