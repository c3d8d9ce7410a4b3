/** Agent operations: register, look up, list, and the agent-level writes. */
import type { Agent, AgentCommand, AgentStatus } from '@rouse/protocol';
import { NotFoundError } from '../../core/errors.js';
import { handOutCommands } from '../agent-heartbeats.js';
import { type DependencyRow, toDependency } from '../dependency-row.js';
import type { AgentHeartbeatInput, DependencyRecord, NewAgent, QueueAgentCommandInput } from '../store.js';
import { type AgentRow, jsonText, toAgent } from './row-mapping.js';
import type { SqliteContext } from './sqlite-context.js';

function heldTaskIds(ctx: SqliteContext, agentId: string): string[] {
  return (ctx.agents.selectHeldTaskIds.all({ agentId }) as { id: string }[]).map((r) => r.id);
}

export function registerAgent(ctx: SqliteContext, agent: NewAgent): Agent {
  const row = ctx.agents.insertAgent.get({
    id: agent.id,
    agentType: agent.agentType,
    name: agent.name,
    host: agent.host,
    pid: agent.pid,
    taskTypes: JSON.stringify(agent.taskTypes),
    labels: JSON.stringify(agent.labels),
    tokenHash: agent.tokenHash,
    registeredAt: ctx.clock.now(),
  }) as AgentRow;
  return toAgent(row, []);
}

export function getAgent(ctx: SqliteContext, id: string): Agent | null {
  const row = ctx.agents.selectAgent.get({ id }) as AgentRow | undefined;
  return row === undefined ? null : toAgent(row, heldTaskIds(ctx, id));
}

export function getAgentByTokenHash(ctx: SqliteContext, tokenHash: string): Agent | null {
  const row = ctx.agents.selectAgentByTokenHash.get({ tokenHash }) as AgentRow | undefined;
  return row === undefined ? null : toAgent(row, heldTaskIds(ctx, row.id));
}

export function listAgents(
  ctx: SqliteContext,
  filter: { taskType?: string; statuses?: AgentStatus[] } = {},
): Agent[] {
  const rows = ctx.agents.listAgents.all({
    taskType: filter.taskType ?? null,
    statuses: filter.statuses && filter.statuses.length > 0 ? JSON.stringify(filter.statuses) : null,
  }) as AgentRow[];
  const held = new Map<string, string[]>();
  for (const r of ctx.agents.selectAllHeldTaskIds.all() as { agent_id: string; id: string }[]) {
    const ids = held.get(r.agent_id);
    if (ids === undefined) held.set(r.agent_id, [r.id]);
    else ids.push(r.id);
  }
  return rows.map((row) => toAgent(row, held.get(row.id) ?? []));
}

function requireChanged(changes: number, agentId: string): void {
  if (changes === 0) throw new NotFoundError('agent', agentId);
}

export function recordAgentHeartbeats(
  ctx: SqliteContext,
  inputs: readonly AgentHeartbeatInput[],
): (AgentCommand[] | null)[] {
  const found = new Set<string>();
  for (const input of inputs) {
    const { changes } = ctx.agents.recordAgentHeartbeat.run({
      id: input.agentId,
      now: ctx.clock.now(),
      status: input.status ?? null,
      metrics: jsonText(input.metrics),
    });
    if (changes > 0) found.add(input.agentId);
  }
  return handOutCommands(inputs, found, (agentId) => {
    const rows = ctx.agents.selectAgentCommands.all({ agentId }) as { command: string }[];
    if (rows.length > 0) ctx.agents.clearAgentCommands.run({ agentId });
    return rows.map((r) => JSON.parse(r.command) as AgentCommand);
  });
}

export function recordPoll(ctx: SqliteContext, input: { agentId: string; types: string[] }): void {
  const { changes } = ctx.agents.recordPoll.run({
    id: input.agentId,
    now: ctx.clock.now(),
    types: JSON.stringify(input.types),
  });
  requireChanged(changes, input.agentId);
}

export function setAgentStatus(ctx: SqliteContext, agentId: string, status: AgentStatus): void {
  requireChanged(ctx.agents.setAgentStatus.run({ id: agentId, status }).changes, agentId);
}

export function queueAgentCommand(ctx: SqliteContext, input: QueueAgentCommandInput): void {
  const { agentId, command } = input;
  ctx.agents.insertAgentCommand.run({
    agentId,
    type: command.type,
    taskId: command.taskId ?? null,
    command: JSON.stringify(command),
    now: ctx.clock.now(),
  });
  ctx.agents.trimAgentCommands.run({
    agentId,
    keep: Math.max(1, Math.floor(input.keep)),
    now: ctx.clock.now(),
    maxAgeMs: input.maxAgeMs,
  });
}

export function clearAgentCommands(ctx: SqliteContext, agentId: string): void {
  ctx.agents.clearAgentCommands.run({ agentId });
}

export function saveDependency(ctx: SqliteContext, d: Omit<DependencyRecord, 'version'>): DependencyRecord {
  const row = ctx.agents.saveDependency.get({
    name: d.name,
    state: d.state,
    until: d.until,
    since: d.since,
    reportedBy: d.reportedBy,
    message: d.message,
  }) as DependencyRow;
  return toDependency(row);
}

export function listDependencies(ctx: SqliteContext): DependencyRecord[] {
  return (ctx.agents.listDependencies.all() as DependencyRow[]).map(toDependency);
}
