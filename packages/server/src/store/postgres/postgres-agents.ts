/** Agent operations on PostgreSQL (lease shards: `postgres-shards.ts`). */
import type { Agent, AgentCommand, AgentStatus } from '@rouse/protocol';
import { NotFoundError } from '../../core/errors.js';
import { handOutCommands } from '../agent-heartbeats.js';
import { type DependencyRow, toDependency } from '../dependency-row.js';
import type { AgentHeartbeatInput, DependencyRecord, NewAgent, QueueAgentCommandInput } from '../store.js';
import { AGENT_SQL } from './agent-statements.js';
import type { PgContext } from './postgres-context.js';
import { type AgentRow, pgJson, pgText, toAgent } from './row-mapping.js';

export async function registerAgent(ctx: PgContext, agent: NewAgent): Promise<Agent> {
  const [row] = await ctx.rows<AgentRow>('insertAgent', AGENT_SQL.insertAgent, [
    ctx.now(),
    agent.id,
    agent.agentType,
    agent.name,
    agent.host,
    agent.pid,
    pgJson(agent.taskTypes),
    pgJson(agent.labels),
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

export async function recordAgentHeartbeats(
  ctx: PgContext,
  inputs: readonly AgentHeartbeatInput[],
): Promise<(AgentCommand[] | null)[]> {
  if (inputs.length === 0) return [];
  // One entry per agent, the last status and metrics given for it (an UPDATE applies one per row).
  const last = new Map<string, AgentHeartbeatInput>();
  for (const input of inputs) last.set(input.agentId, input);
  const entries = [...last.values()].map((i) => ({
    id: i.agentId,
    status: i.status ?? null,
    metrics: i.metrics ?? null,
  }));
  const rows = await ctx.rows<{ agent_id: string; seq: number | null; command: AgentCommand | null }>(
    'recordAgentHeartbeats',
    AGENT_SQL.recordAgentHeartbeats,
    [ctx.now(), pgJson(entries)],
  );
  const found = new Set<string>();
  const taken = new Map<string, { seq: number; command: AgentCommand }[]>();
  for (const r of rows) {
    if (r.seq === null || r.command === null) found.add(r.agent_id);
    else {
      const list = taken.get(r.agent_id);
      if (list === undefined) taken.set(r.agent_id, [{ seq: r.seq, command: r.command }]);
      else list.push({ seq: r.seq, command: r.command });
    }
  }
  return handOutCommands(inputs, found, (agentId) =>
    (taken.get(agentId) ?? []).sort((a, b) => a.seq - b.seq).map((c) => c.command),
  );
}

export async function recordPoll(ctx: PgContext, input: { agentId: string; types: string[] }): Promise<void> {
  const changes = await ctx.changes('recordPoll', AGENT_SQL.recordPoll, [
    ctx.now(),
    input.agentId,
    pgJson(input.types),
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
    pgJson(command),
  ]);
  await ctx.changes('trimAgentCommands', AGENT_SQL.trimAgentCommands, [
    ctx.now(),
    agentId,
    Math.max(1, Math.floor(input.keep)),
    input.maxAgeMs,
  ]);
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
    pgText(d.reportedBy),
    pgText(d.message),
  ]);
  return toDependency(row!);
}

export async function listDependencies(ctx: PgContext): Promise<DependencyRecord[]> {
  return (await ctx.rows<DependencyRow>('listDependencies', AGENT_SQL.listDependencies)).map(toDependency);
}
