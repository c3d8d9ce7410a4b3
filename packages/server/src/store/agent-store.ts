/**
 * The agent half of the Store contract: agent slots and their incarnations, tokens, heartbeats,
 * polls, leaving, and the commands queued for them. Part of `Store` (`store.ts`), with the rules
 * written there. What the watchdog keeps about agents (conditions, leases, baselines) is
 * `WatchdogStore` (`watchdog-store.ts`).
 *
 * An agent is a slot (`id`) that outlives its processes: registering under a `key` an agent of the
 * same type already holds starts a new incarnation of that slot (docs/design.md §6.1). Writes of an agent
 * name the incarnation they come from, so a replaced process changes nothing.
 */
import type {
  Agent,
  AgentCommand,
  AgentMetrics,
  AgentStatus,
  Json,
  JsonObject,
  ReportedAgentStatus,
} from '@rouse/protocol';
import type { AgentWatch, ConditionRecord, MetricSample } from './watchdog-store.js';

export type { AgentLifecycle } from './watchdog-store.js';

export interface NewAgent {
  /** The id of a new slot; when `key` names an existing slot of the same `agentType`, that slot's id is kept. */
  id: string;
  /** The slot's key, or null: every registration is a new agent. */
  key: string | null;
  agentType: string;
  name: string;
  host: string | null;
  pid: number | null;
  taskTypes: string[];
  labels: Record<string, string>;
  requires: string[];
  supervisorId: string | null;
  /** sha256 (hex) of the agent's bearer token. */
  tokenHash: string;
  /** The name of the policy that applies to it. */
  policy: string;
  heartbeatIntervalMs: number;
  /** Its first lease: it is lost unless it heartbeats within this long (the policy's startup timeout). */
  startupTimeoutMs: number;
  /**
   * With a `key`: refuse — throw `agent_key_in_use`, nothing written — while the slot's current
   * incarnation is active and its lease has not run out (one live supervisor per name), instead of
   * starting the next incarnation. @default false
   */
  exclusive?: boolean;
}

export interface Registration {
  agent: Agent;
  /** The incarnation this registration replaced (the same key), or null for a new slot. */
  replacedIncarnation: number | null;
  /** The previous incarnation's open conditions, closed by this registration. */
  closed: ConditionRecord[];
}

/** A command for an agent, kept until the agent's next heartbeat takes it (on any coordinator). */
export interface QueueAgentCommandInput {
  agentId: string;
  command: AgentCommand;
  /** Keep at most this many queued commands for the agent; the oldest beyond it are dropped. */
  keep: number;
  /**
   * Commands of any agent queued longer ago than this are dropped too: their agents never came back
   * for them.
   */
  maxAgeMs: number;
}

export interface AgentHeartbeatInput {
  agentId: string;
  /** The incarnation the heartbeat comes from: one that was replaced changes nothing. */
  incarnation: number;
  status?: ReportedAgentStatus | undefined;
  /** Recorded with `status` (a status without a message clears it). */
  statusMessage?: string | undefined;
  metrics?: AgentMetrics | undefined;
  metadata?: JsonObject | undefined;
  /**
   * The agent's own progress when this beat reports it: the value (the heartbeat's `progress`, or its
   * policy's `progress_field` of `metadata`) and the phase. The stall clock (`progressChangedAt`)
   * moves when either differs from the last recorded.
   */
  progress?: { value: Json; phase: string | null } | undefined;
  /** The lease after this beat: now + `leaseMs`, but never before `startedAt + quietPeriodMs`. */
  leaseMs: number;
  quietPeriodMs: number;
  heartbeatIntervalMs: number;
  /** A metric sample, appended to the agent's ring when the last one is `sampleSpacingMs` old. */
  sample?: Omit<MetricSample, 'at'> | undefined;
  sampleSpacingMs: number;
  /** The ring keeps this many samples. */
  maxSamples: number;
  /** Keep the gaps between heartbeats (the adaptive timeout needs them); at most this many. 0 = none. */
  maxGaps: number;
}

export interface AgentHeartbeatResult {
  /** Its queued commands, taken by this heartbeat (each command is taken once). */
  commands: AgentCommand[];
  /** What the watchdog's detectors need, as this heartbeat left it. */
  watch: AgentWatch;
}

/** The agent an agent token stands for. */
export interface AgentTokenOwner {
  agentId: string;
  incarnation: number;
  agentType: string;
}

export interface AgentQuery {
  /** Agents that registered for this task type or last polled for it. */
  taskType?: string;
  agentType?: string;
  /** Only agents in these derived statuses. */
  statuses?: readonly AgentStatus[];
  /** Agents per page. @default all */
  limit?: number;
  /** Opaque, from a previous page's `nextCursor`. */
  cursor?: string | null;
}

export interface AgentStore {
  /**
   * Register a new slot, or — `key` given and held by a slot of the same `agentType` — start its next
   * incarnation: `incarnation + 1`, the new token (the old one stops resolving), active again with
   * its per-incarnation state reset (reported status, progress, samples, lease from now) and its open
   * conditions closed. The tasks the replaced incarnation held are the caller's to release. With
   * `exclusive`, a slot whose incarnation is still live is refused (`agent_key_in_use`) instead.
   */
  registerAgent(agent: NewAgent): Promise<Registration>;
  getAgent(id: string): Promise<Agent | null>;
  /**
   * Who a bearer token (by its sha256) belongs to: the agent, the incarnation it was issued to, its
   * type. Null if unknown, replaced by a newer incarnation's, or the agent ended. One indexed read:
   * every agent request needs it.
   */
  resolveAgentToken(tokenHash: string): Promise<AgentTokenOwner | null>;
  /**
   * Agents in registration order (derived statuses and open conditions included), filtered in the
   * store, a page at a time when `limit` is given (`nextCursor` is null on the last page).
   */
  listAgents(query?: AgentQuery): Promise<{ agents: Agent[]; nextCursor: string | null }>;
  /**
   * Agent-level heartbeats of several agents in one write: each active agent of the given
   * incarnation gets its heartbeat time, lease, status, metrics, metadata, progress and sample
   * recorded, and its queued commands taken, oldest first — each command is returned by exactly one
   * call. One result per input, in order; null when no such agent is active in that incarnation. An
   * agent named twice gets its commands with its first input that finds it active in its incarnation
   * (the batch's later inputs win for the rest).
   */
  recordAgentHeartbeats(inputs: readonly AgentHeartbeatInput[]): Promise<(AgentHeartbeatResult | null)[]>;
  /** Remember that the agent asked for work (for "why isn't my task running?"). */
  recordPoll(input: { agentId: string; types: string[] }): Promise<void>;
  /**
   * The agent left (`left`) or was ended by the watchdog (`terminated`): no lease any more, its token
   * stops resolving, its open conditions close. Throws `not_found` for an unknown agent; an agent
   * that already ended stays as it is (empty result).
   */
  endAgent(input: {
    agentId: string;
    lifecycle: 'left' | 'terminated';
    reason: string;
  }): Promise<ConditionRecord[]>;
  /**
   * Queue a command for an agent. A command naming a task is not queued twice while the first is
   * still waiting (same agent, type and task).
   */
  queueAgentCommand(input: QueueAgentCommandInput): Promise<void>;
  /** Drop every command queued for the agent (it left). */
  clearAgentCommands(agentId: string): Promise<void>;
  /**
   * Take the agent's queued commands, oldest first, without a heartbeat (a long-poll for commands):
   * each command is returned by exactly one take or heartbeat.
   */
  takeAgentCommands(agentId: string): Promise<AgentCommand[]>;
}
