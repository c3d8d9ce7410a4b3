/**
 * The watchdog half of the Store contract (docs/design.md §6): what its detectors need and conclude, kept
 * in the store so that detection is the same whichever coordinator a heartbeat reached and survives a
 * restart — agent leases, the conditions opened and closed on agents, per-type baselines, and the
 * shared dependency states. Part of `Store` (`store.ts`), with the rules written there.
 *
 * Opening a condition is a conditional write: at most one open condition per (agent, kind, task), so
 * two coordinators seeing the same thing record it once.
 */
import type {
  AgentConditionRecord,
  AgentMetrics,
  ConditionKind,
  Json,
  JsonObject,
  ReportedAgentStatus,
} from '@rouse/protocol';
import type { SampleRing } from '../core/watchdog/samples.js';
import type { DependencyRecord } from './coordination.js';

/** An agent is `active` until it leaves (`left`) or the watchdog ends it (`terminated`). */
export type AgentLifecycle = 'active' | 'left' | 'terminated';

/** One metric sample of an agent's bounded ring (times by the store clock). */
export interface MetricSample {
  at: number;
  rssBytes: number | null;
  cpuPercent: number | null;
  iterationMs: number | null;
}

/** Which condition: its kind and, for a held task's stall, the task. */
export interface ConditionKey {
  condition: ConditionKind;
  taskId: string | null;
}

/** A condition as stored: open (`closedAt` null) or closed, with who opened it (the wire's record). */
export type ConditionRecord = AgentConditionRecord;

/** What the detectors read about one agent (returned by its heartbeat's write, or read again). */
export interface AgentWatch {
  agentId: string;
  incarnation: number;
  agentType: string;
  policy: string;
  lifecycle: AgentLifecycle;
  /** This incarnation's registration (the quiet period runs from here). */
  startedAt: number;
  lastHeartbeatAt: number | null;
  leaseExpiresAt: number | null;
  heartbeatIntervalMs: number;
  reportedStatus: ReportedAgentStatus;
  /** When the reported status last changed (error_persisting runs from here). */
  reportedStatusSince: number;
  statusMessage: string | null;
  progress: Json | null;
  phase: string | null;
  progressChangedAt: number | null;
  /** Its recent metric samples, oldest first, bounded (read on every beat: one flat array). */
  samples: SampleRing;
  /** Gaps between its recent heartbeats (ms), oldest first, when kept. */
  gaps: number[];
  /** The last reported iteration time (ms), if any. */
  iterationMs: number | null;
  /** The metrics of its last heartbeat that carried some (the ring holds spaced samples only). */
  metrics: AgentMetrics | null;
  requires: string[];
  openConditions: ConditionKey[];
  /** The tasks it holds (claimed or running), oldest first. */
  heldTaskIds: string[];
}

export type ConditionChange =
  | {
      kind: 'open';
      agentId: string;
      /** Only while the agent is active in this incarnation. */
      incarnation: number;
      condition: ConditionKind;
      taskId: string | null;
      since: number;
      evidence: JsonObject;
      openedBy: string;
    }
  | {
      kind: 'close';
      agentId: string;
      condition: ConditionKind;
      taskId: string | null;
      reason: string;
    };

/** An agent lease the shard owner must watch. */
export interface AgentLeaseEntry {
  agentId: string;
  incarnation: number;
  leaseExpiresAt: number;
  lastHeartbeatAt: number | null;
  startedAt: number;
  heartbeatIntervalMs: number;
  /** The full lease length (the restart grace after a coordinator start). */
  heartbeatTimeoutMs: number;
}

export interface MarkLostInput {
  agentId: string;
  incarnation: number;
  evidence: JsonObject;
  openedBy: string;
}

/** A per-type baseline as one coordinator saved it (readers merge every coordinator's). */
export interface BaselineRecord {
  agentType: string;
  /** `iteration_ms` or `heartbeat_gap_ms`. */
  metric: string;
  coordinatorId: string;
  /** The serialised histogram (`core/watchdog/baseline.ts`). */
  histogram: number[];
  updatedAt: number;
}

/** How many agents share one (lifecycle, reported status, open conditions): the status gauges. */
export interface AgentStatusCount {
  lifecycle: AgentLifecycle;
  reportedStatus: ReportedAgentStatus;
  openConditions: ConditionKind[];
  count: number;
}

export interface WatchdogStore {
  /**
   * Open and close conditions, in one write, each conditional: an `open` of a condition already open
   * (same agent, kind and task), or for an agent that is not active in that incarnation, changes
   * nothing; a `close` of one that is not open changes nothing. One result per change, in order: the
   * record as the change left it, or null when it changed nothing.
   */
  applyConditionChanges(changes: readonly ConditionChange[]): Promise<(ConditionRecord | null)[]>;
  /** Conditions newest first: open or closed, of one agent or all. */
  listConditions(query: { agentId?: string; open?: boolean; limit?: number }): Promise<ConditionRecord[]>;
  /** The conditions with these seqs, in that order (those that do not exist are left out). */
  readConditions(seqs: readonly number[]): Promise<ConditionRecord[]>;
  /** The watch state of these agents (unknown ids are left out). */
  getAgentWatches(agentIds: readonly string[]): Promise<AgentWatch[]>;
  /**
   * Active agents whose lease ends by `dueBy` (store clock), in the given lease shards (all when
   * omitted), soonest first.
   */
  dueAgentLeases(query: {
    dueBy: number;
    shards?: { ids: number[]; count: number };
  }): Promise<AgentLeaseEntry[]>;
  /**
   * The agents are lost: each one whose lease has passed by the store clock (an adaptive lease is
   * shorter, not judged apart) and is active in that incarnation gets
   * no lease any more and an open `heartbeat_timeout` condition with the evidence. One result per
   * input: the condition opened, or null when nothing was due (it heartbeat meanwhile, was replaced,
   * ended, or is lost already).
   */
  markAgentsLost(inputs: readonly MarkLostInput[]): Promise<(ConditionRecord | null)[]>;
  /** Save this coordinator's baselines (replacing its earlier ones of the same type and metric). */
  saveBaselines(records: readonly Omit<BaselineRecord, 'updatedAt'>[]): Promise<void>;
  /** Every saved baseline, of every coordinator. */
  listBaselines(): Promise<BaselineRecord[]>;
  /** Agents grouped by what decides their derived status. */
  agentStatusCounts(): Promise<AgentStatusCount[]>;
  /** Save a dependency's state (replacing the previous one); returns it with its new version. */
  saveDependency(record: Omit<DependencyRecord, 'version'>): Promise<DependencyRecord>;
  /** Every dependency ever reported, by name. */
  listDependencies(): Promise<DependencyRecord[]>;
}
