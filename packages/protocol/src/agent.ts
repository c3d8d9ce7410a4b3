/**
 * Agent wire types (docs/protocol.md "Agents", "The watchdog").
 *
 * An agent is a slot (`agentId`) that outlives its processes: each registration under the same `key`
 * starts a new incarnation. It claims tasks and/or reports heartbeats; its `agentType` selects its
 * policy. Agent-level heartbeats carry the heartbeats of every task it holds, so one request per agent
 * renews all of its leases. The agent reports what it knows of itself (`reportedStatus`); the
 * coordinator derives `status` from that and from its detectors (`conditions`).
 */
import type { z } from 'zod';
import type * as schemas from './schemas/agents.js';
import type { AgentSnapshot } from './snapshot.js';
import type { Json, JsonObject, Task } from './task.js';
import type { AgentStatus, ReportedAgentStatus } from './vocabulary.js';
import type { AgentCondition } from './watchdog.js';

export type AgentMetrics = z.input<typeof schemas.metrics>;

/** A held task's spend against one of its budget limits, as an agent reports it in `metrics.budgets`. */
export type TaskBudgetReport = z.input<typeof schemas.taskBudget>;

export type DependencyReport = z.input<typeof schemas.dependencyReport>;

export interface Agent {
  id: string;
  /** The slot's key given at registration, or null (every registration a new agent). */
  key: string | null;
  /** 1 at the first registration; grows with each re-registration under the same key. */
  incarnation: number;
  agentType: string;
  name: string;
  host: string | null;
  pid: number | null;
  taskTypes: string[];
  labels: Record<string, string>;
  /** Dependencies it needs (its own, and its policy's). */
  requires: string[];
  /** The supervisor that runs this process, if any. */
  supervisorId: string | null;
  /** The name of the policy that applies to it (`"*"` rules when no policy names its type). */
  policy: string;
  /** Derived (see {@link AGENT_STATUSES}). */
  status: AgentStatus;
  /** What it last said of itself. */
  reportedStatus: ReportedAgentStatus;
  /** What it said with its status (the last error message), or null. */
  statusMessage: string | null;
  /** Every open condition, oldest first. */
  conditions: AgentCondition[];
  /** The first registration of this slot. */
  registeredAt: number;
  /** This incarnation's registration. */
  startedAt: number;
  lastHeartbeatAt: number | null;
  /** When it will be `lost` unless it heartbeats; null once it left or was terminated. */
  leaseExpiresAt: number | null;
  /** The heartbeat interval its policy asks for. */
  heartbeatIntervalMs: number;
  /** Last time the agent asked for work (claim). */
  lastPollAt: number | null;
  /** Task types it polled for last. */
  lastPollTypes: string[];
  metrics: AgentMetrics | null;
  metadata: JsonObject | null;
  /** Its own progress (monitor mode): the heartbeat's `progress`, or its policy's `progress_field`. */
  progress: Json | null;
  phase: string | null;
  /** When its own progress or phase last changed (the agent stall clock). */
  progressChangedAt: number | null;
  /** When it left or was terminated. */
  endedAt: number | null;
  /** Ids of the tasks it currently holds (claimed or running). */
  currentTaskIds: string[];
}

export type RegisterAgentRequest = z.input<typeof schemas.registerAgent>;

export interface RegisterAgentResponse {
  agent: Agent;
  token: string;
  heartbeatIntervalMs: number;
  /** Same as `agent.incarnation`. */
  incarnation: number;
  /**
   * The latest live snapshot of this agent slot (what the previous incarnation saved under the same
   * `key`), or null: none, or it expired.
   */
  snapshot: AgentSnapshot | null;
}

/** A completion folded into a claim ("complete-and-claim-next"). */
export type ClaimCompletion = NonNullable<ClaimRequest['complete']>[number];
export type ClaimRequest = z.input<typeof schemas.claim>;

export interface WriteOutcome {
  taskId: string;
  ok: boolean;
  code?: string;
  leaseExpiresAt?: number;
}

export interface ClaimResponse {
  tasks: Task[];
  /** Outcome of each entry of `complete`, in order. */
  completed?: WriteOutcome[];
}

export type TaskBeat = z.input<typeof schemas.taskBeat>;
export type AgentHeartbeatRequest = z.input<typeof schemas.agentHeartbeat>;

/**
 * A command for an agent. As queued (`POST /v1/agents/{id}/commands`) it has no `id`; as delivered on
 * a heartbeat response it carries the `id` its acknowledgement names.
 *
 * Commands for a supervised agent that its supervisor carries out (`restart`, `terminate`, and `wake`
 * — the supervisor sends its signal) are delivered to the supervisor, on the supervisor's heartbeat
 * response, with `agentId` and `agentKey` naming the child they are for: a hung process cannot
 * collect its own restart. A `wake` goes to the agent itself as well, under the same id.
 */
export type AgentCommand = z.input<typeof schemas.agentCommand> & {
  id?: string;
  /** Delivered to a supervisor: the child agent the command is for. */
  agentId?: string;
  /** Delivered to a supervisor: that child's slot key. */
  agentKey?: string;
};

/** The agent type `rouse supervise` registers as (one agent per supervisor, keyed by its name). */
export const SUPERVISOR_AGENT_TYPE = 'rouse.supervisor';

/** One child in a supervisor's heartbeat (`children`). */
export type SupervisedChild = z.input<typeof schemas.supervisedChild>;
/** A child whose restart budget ran out, in a supervisor's heartbeat (`fatal`). */
export type FatalReport = z.input<typeof schemas.fatalReport>;

export type CommandAck = z.input<typeof schemas.commandAck>;

export interface AgentHeartbeatResponse {
  heartbeatIntervalMs: number;
  tasks: WriteOutcome[];
  commands: AgentCommand[];
}

export type NextCommandsRequest = z.input<typeof schemas.nextCommands>;

export type CommandAcksRequest = z.input<typeof schemas.commandAcks>;

/** `POST /v1/agents/{id}/commands/acks`: how many answered a command an open intervention sent. */
export interface CommandAcksResponse {
  recorded: number;
}

/** `POST /v1/agents/{id}/commands/next`: the commands taken (each handed out once), oldest first. */
export interface NextCommandsResponse {
  commands: AgentCommand[];
}

export interface ListAgentsResponse {
  agents: Agent[];
  /** Pass as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}
export interface AgentResponse {
  agent: Agent;
}
