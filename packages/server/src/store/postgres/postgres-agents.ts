/** Agent operations and lease shards on PostgreSQL. */
import type { Agent, AgentStatus } from '@rouse/protocol';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import type { AgentHeartbeatInput, NewAgent, ShardLease } from '../store.js';
import { AGENT_SQL, SHARD_SQL } from './agent-statements.js';
import type { PgContext } from './postgres-context.js';
import { type AgentRow, jsonParam, type ShardRow, toAgent, toShardLease } from './row-mapping.js';

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

export async function acquireShardLeases(
  ctx: PgContext,
  input: { ownerId: string; shardCount: number; want: number; ttlMs: number },
): Promise<ShardLease[]> {
  const { ownerId, shardCount, want, ttlMs } = input;
  if (typeof ownerId !== 'string' || ownerId.length === 0)
    throw new ValidationError('ownerId', 'must be a non-empty string');
  if (!Number.isInteger(shardCount) || shardCount < 1)
    throw new ValidationError('shardCount', 'must be an integer >= 1');
  if (!Number.isInteger(want) || want < 0) throw new ValidationError('want', 'must be an integer >= 0');
  if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new ValidationError('ttlMs', 'must be an integer >= 1');
  const rows = await ctx.rows<ShardRow>('acquireShardLeases', SHARD_SQL.acquireShardLeases, [
    ctx.now(),
    ownerId,
    shardCount,
    want,
    ttlMs,
  ]);
  return rows.map(toShardLease);
}

export async function releaseShardLeases(ctx: PgContext, ownerId: string): Promise<void> {
  await ctx.changes('releaseShardLeases', SHARD_SQL.releaseShardLeases, [ctx.now(), ownerId]);
}

export async function listShardLeases(ctx: PgContext): Promise<ShardLease[]> {
  return (await ctx.rows<ShardRow>('selectShardLeases', SHARD_SQL.selectShardLeases)).map(toShardLease);
}
