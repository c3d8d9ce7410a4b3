/**
 * What the agent contract suites share: a new agent's fields, a heartbeat input, and queueing and
 * taking an agent's commands the way the coordinator does.
 */
import type { AgentCommand } from '@rouse/protocol';
import type { AgentHeartbeatInput, NewAgent, Store } from '../../store/store.js';

/** A new agent's fields: every field at a plain value, then `overrides`. */
export function newAgent(id: string, overrides: Partial<NewAgent> = {}): NewAgent {
  return {
    id,
    key: null,
    agentType: 'codex-reviewer',
    name: `host/${id}`,
    host: 'host-1',
    pid: 4242,
    taskTypes: ['work'],
    labels: { zone: 'a' },
    requires: [],
    supervisorId: null,
    tokenHash: `hash-${id}`,
    policy: 'default',
    heartbeatIntervalMs: 5000,
    startupTimeoutMs: 30_000,
    ...overrides,
  };
}

/** A heartbeat input with the plain lease settings (15 s lease, no quiet period, no samples). */
export function beat(agentId: string, overrides: Partial<AgentHeartbeatInput> = {}): AgentHeartbeatInput {
  return {
    agentId,
    incarnation: 1,
    leaseMs: 15_000,
    quietPeriodMs: 0,
    heartbeatIntervalMs: 5000,
    sampleSpacingMs: 0,
    maxSamples: 4,
    maxGaps: 0,
    ...overrides,
  };
}

export const DAY = 86_400_000;

/** Queue `command` for `agentId`, keeping at most `keep` and none older than a day. */
export function queueCommand(store: Store, agentId: string, command: AgentCommand, keep = 10): Promise<void> {
  return store.queueAgentCommand({ agentId, command, keep, maxAgeMs: DAY });
}

/** Take the agent's queued commands the way its heartbeat does. */
export async function take(store: Store, agentId: string): Promise<AgentCommand[]> {
  const [result] = await store.recordAgentHeartbeats([beat(agentId)]);
  if (!result) throw new Error(`agent ${agentId} not found`);
  return result.commands;
}

/** Register agents with these ids (commands are taken by heartbeats, which need the agent). */
export async function registered(store: Store, ...ids: string[]): Promise<void> {
  for (const id of ids) await store.registerAgent(newAgent(id));
}

/** Take the commands with a heartbeat of the slot's current incarnation. */
export async function takeAsCurrent(store: Store, agentId: string): Promise<AgentCommand[]> {
  const agent = await store.getAgent(agentId);
  const [result] = await store.recordAgentHeartbeats([beat(agentId, { incarnation: agent!.incarnation })]);
  return result?.commands ?? [];
}
