/**
 * Agent wire types (PROTOCOL.md "Agents").
 *
 * An agent is a registered process that claims tasks and/or reports heartbeats. Its `agentType`
 * selects its policy. Agent-level heartbeats carry the heartbeats of every task it holds, so one
 * request per agent renews all of its leases.
 */
import type { Json, Task } from './task.js';

export const AGENT_STATUSES = [
  'idle',
  'running',
  'stalled',
  'error',
  'terminating',
  'terminated',
  'lost',
  'left',
] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export interface AgentMetrics {
  rssBytes?: number;
  cpuPercent?: number;
  loopLagMs?: number;
  iterationMs?: number;
}

export const DEPENDENCY_STATES = ['up', 'down', 'rate_limited'] as const;
export type DependencyState = (typeof DEPENDENCY_STATES)[number];

export interface DependencyReport {
  name: string;
  state: DependencyState;
  retryAfterMs?: number;
  message?: string;
}

export interface Agent {
  id: string;
  agentType: string;
  name: string;
  host: string | null;
  pid: number | null;
  taskTypes: string[];
  labels: Record<string, string>;
  status: AgentStatus;
  registeredAt: number;
  lastHeartbeatAt: number | null;
  /** Last time the agent asked for work (claim). */
  lastPollAt: number | null;
  /** Task types it polled for last. */
  lastPollTypes: string[];
  metrics: AgentMetrics | null;
  /** Ids of the tasks it currently holds (claimed or running). */
  currentTaskIds: string[];
}

export interface RegisterAgentRequest {
  agentType: string;
  name?: string;
  host?: string;
  pid?: number;
  taskTypes?: string[];
  labels?: Record<string, string>;
}
export interface RegisterAgentResponse {
  agent: Agent;
  token: string;
  heartbeatIntervalMs: number;
}

/** A completion folded into a claim ("complete-and-claim-next"). */
export interface ClaimCompletion {
  taskId: string;
  version: number;
  result?: Json;
}

export interface ClaimRequest {
  types: string[];
  /** How many tasks at most. @default 1 */
  max?: number;
  /** Long-poll: wait up to this long for work. @default 0 */
  waitMs?: number;
  /** Move claimed tasks straight to `running` in the same write (saves a round trip). @default false */
  start?: boolean;
  /** Complete these held tasks before claiming (one request instead of two). */
  complete?: ClaimCompletion[];
}

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

export interface TaskBeat {
  taskId: string;
  version: number;
  progress?: number;
  phase?: string;
  executionDone?: boolean;
}

export interface AgentHeartbeatRequest {
  status?: AgentStatus;
  progress?: number;
  metrics?: AgentMetrics;
  dependencies?: DependencyReport[];
  tasks?: TaskBeat[];
}

export const COMMAND_TYPES = ['wake', 'cancel', 'checkpoint', 'restart', 'terminate'] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

export interface AgentCommand {
  type: CommandType;
  taskId?: string;
  reason?: string;
}

export interface AgentHeartbeatResponse {
  heartbeatIntervalMs: number;
  tasks: WriteOutcome[];
  commands: AgentCommand[];
}

export interface ListAgentsResponse {
  agents: Agent[];
}
export interface AgentResponse {
  agent: Agent;
}
