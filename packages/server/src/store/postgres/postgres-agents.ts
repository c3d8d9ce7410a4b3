/** Agent operations on PostgreSQL (lease shards: `postgres-shards.ts`). */
import type { Agent, AgentCommand, AgentStatus } from '@rouse/protocol';
import { NotFoundError } from '../../core/errors.js';
import { type DependencyRow, toDependency } from '../dependency-row.js';
import type { AgentHeartbeatInput, DependencyRecord, NewAgent, QueueAgentCommandInput } from '../store.js';
import { AGENT_SQL } from './agent-statements.js';
import type { PgContext } from './postgres-context.js';
import { type AgentRow, jsonParam, toAgent } from './row-mapping.js';

export async function registerAgent(ctx: PgContext, agent: NewAgent): Promise<Agent> {
  const [row] = await ctx.rows<AgentRow>('insertAgent', AGENT_SQL.insertAgent, [
    ctx.now(),
    agent.id,
    agent.agentType,
    agent.name,
    agent.host,
    agent.pid,
    JSON.stringify(agent.taskTypes),
    JSON.stringify(agent.labels),
    agent.tokenHash,
  ]);
  return toAgent({ ...row!, current_task_ids: [] });
}

export async function getAgent(ctx: PgContext, id: string): Promise<Agent | null> {
  const [row] = await ctx.rows<AgentRow>('selectAgent', AGENT_SQL.selectAgent, [id]);
  return row === undefined ? null : toAgent(row);
}

export async function getAgentByTokenHash(ctx: PgContext, tokenHash: string): Promise<Agent | null> {
  const [row] = await ctx.rows<AgentRow>('selectAgentByTokenHash', AGENT_SQL.selectAgentByTokenHash, [
    tokenHash,
  ]);
  return row === undefined ? null : toAgent(row);
}

export async function listAgents(
  ctx: PgContext,
  filter: { taskType?: string; statuses?: AgentStatus[] } = {},
): Promise<Agent[]> {
  const rows = await ctx.rows<AgentRow>('listAgents', AGENT_SQL.listAgents, [
    filter.taskType ?? null,
    filter.statuses && filter.statuses.length > 0 ? filter.statuses : null,
  ]);
  return rows.map(toAgent);
}

function requireChanged(changes: number, agentId: string): void {
  if (changes === 0) throw new NotFoundError('agent', agentId);
}

export async function recordAgentHeartbeat(ctx: PgContext, input: AgentHeartbeatInput): Promise<void> {
  const changes = await ctx.changes('recordAgentHeartbeat', AGENT_SQL.recordAgentHeartbeat, [
    ctx.now(),
    input.agentId,
    input.status ?? null,
    jsonParam(input.metrics),
  ]);
  requireChanged(changes, input.agentId);
}

export async function recordPoll(ctx: PgContext, input: { agentId: string; types: string[] }): Promise<void> {
  const changes = await ctx.changes('recordPoll', AGENT_SQL.recordPoll, [
    ctx.now(),
    input.agentId,
    JSON.stringify(input.types),
  ]);
  requireChanged(changes, input.agentId);
}

export async function setAgentStatus(ctx: PgContext, agentId: string, status: AgentStatus): Promise<void> {
  requireChanged(await ctx.changes('setAgentStatus', AGENT_SQL.setAgentStatus, [agentId, status]), agentId);
}

export async function queueAgentCommand(ctx: PgContext, input: QueueAgentCommandInput): Promise<void> {
  const { agentId, command } = input;
  await ctx.changes('insertAgentCommand', AGENT_SQL.insertAgentCommand, [
    ctx.now(),
    agentId,
    command.type,
    command.taskId ?? null,
    JSON.stringify(command),
  ]);
  await ctx.changes('trimAgentCommands', AGENT_SQL.trimAgentCommands, [
    ctx.now(),
    agentId,
    Math.max(1, Math.floor(input.keep)),
    input.maxAgeMs,
  ]);
}

export async function takeAgentCommands(ctx: PgContext, agentId: string): Promise<AgentCommand[]> {
  const rows = await ctx.rows<{ seq: number; command: AgentCommand }>(
    'takeAgentCommands',
    AGENT_SQL.takeAgentCommands,
    [agentId],
  );
  return rows.sort((a, b) => a.seq - b.seq).map((r) => r.command);
}

export async function clearAgentCommands(ctx: PgContext, agentId: string): Promise<void> {
  await ctx.changes('clearAgentCommands', AGENT_SQL.clearAgentCommands, [agentId]);
}

export async function saveDependency(
  ctx: PgContext,
  d: Omit<DependencyRecord, 'version'>,
): Promise<DependencyRecord> {
  const [row] = await ctx.rows<DependencyRow>('saveDependency', AGENT_SQL.saveDependency, [
    d.name,
    d.state,
    d.until,
    d.since,
    d.reportedBy,
    d.message,
  ]);
  return toDependency(row!);
}

export async function listDependencies(ctx: PgContext): Promise<DependencyRecord[]> {
  return (await ctx.rows<DependencyRow>('listDependencies', AGENT_SQL.listDependencies)).map(toDependency);
}
