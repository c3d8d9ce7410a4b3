/** The SQLite AgentStore: slots and incarnations, lookups, heartbeats, polls, leaving, commands. */
import type { Agent, AgentCommand } from '@rouse/protocol';
import { NotFoundError } from '../../core/errors.js';
import { heartbeatColumns } from '../agent-heartbeat-rules.js';
import { handOutCommands } from '../agent-heartbeats.js';
import { type ConditionRow, toAgent, toWatch } from '../agent-row.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { shardOf } from '../lease-shards.js';
import type {
  AgentHeartbeatInput,
  AgentHeartbeatResult,
  AgentQuery,
  AgentTokenOwner,
  ConditionRecord,
  NewAgent,
  QueueAgentCommandInput,
  Registration,
} from '../store.js';
import { keyInUseError } from '../write-errors.js';
import { agentRow, beatingRow, conditionRows } from './agent-rows.js';
import { jsonText } from './row-mapping.js';
import { encodeSamples } from './sample-ring.js';
import type { SqliteContext } from './sqlite-context.js';
import { closeAllConditions } from './sqlite-watchdog.js';

/** The wire agent for a raw row: its open conditions and held tasks read in the same transaction. */
function agentOf(ctx: SqliteContext, raw: Record<string, unknown>): Agent {
  const row = agentRow(raw);
  const conditions =
    row.open_conditions.length === 0
      ? []
      : conditionRows(ctx.watchdog.agentOpenConditions.all({ agentId: row.id }) as ConditionRow[]);
  return toAgent(row, conditions, ctx.heldTaskIds(row.id));
}

export function registerAgent(ctx: SqliteContext, agent: NewAgent): Registration {
  const now = ctx.clock.now();
  const params = {
    ...agent,
    taskTypes: JSON.stringify(agent.taskTypes),
    labels: JSON.stringify(agent.labels),
    requires: JSON.stringify(agent.requires),
    now,
    leaseExpiresAt: now + agent.startupTimeoutMs,
  };
  const existing =
    agent.key === null
      ? undefined
      : (ctx.agents.selectAgentByKey.get({ agentType: agent.agentType, key: agent.key }) as
          | { id: string; incarnation: number; lifecycle: string; leaseExpiresAt: number | null }
          | undefined);
  if (
    agent.exclusive === true &&
    existing !== undefined &&
    existing.lifecycle === 'active' &&
    existing.leaseExpiresAt !== null &&
    existing.leaseExpiresAt > now
  ) {
    throw keyInUseError(agent.key!, existing);
  }
  if (existing === undefined) {
    ctx.agents.insertAgent.run({ ...params, shard: shardOf(agent.id) });
    return { agent: mustRead(ctx, agent.id), replacedIncarnation: null, closed: [] };
  }
  const closed = closeAllConditions(ctx, existing.id, 'replaced by a new incarnation', now);
  const { replaced } = ctx.agents.reincarnateAgent.get({ ...params, id: existing.id }) as {
    replaced: number;
  };
  ctx.agents.clearAgentCommands.run({ agentId: existing.id });
  return { agent: mustRead(ctx, existing.id), replacedIncarnation: replaced, closed };
}

function mustRead(ctx: SqliteContext, id: string): Agent {
  const agent = getAgent(ctx, id);
  if (agent === null) throw new NotFoundError('agent', id);
  return agent;
}

export function getAgent(ctx: SqliteContext, id: string): Agent | null {
  const raw = ctx.agents.selectAgent.get({ id }) as Record<string, unknown> | undefined;
  return raw === undefined ? null : agentOf(ctx, raw);
}

export function resolveAgentToken(ctx: SqliteContext, tokenHash: string): AgentTokenOwner | null {
  return (ctx.agents.selectTokenOwner.get({ tokenHash }) as AgentTokenOwner | undefined) ?? null;
}

export function listAgents(
  ctx: SqliteContext,
  query: AgentQuery = {},
): { agents: Agent[]; nextCursor: string | null } {
  const limit = query.limit ?? Number.MAX_SAFE_INTEGER;
  const raws = ctx.agents.listAgents.all({
    taskType: query.taskType ?? null,
    agentType: query.agentType ?? null,
    statuses: query.statuses === undefined ? null : JSON.stringify(query.statuses),
    afterSeq: query.cursor ? decodeCursor(query.cursor) : 0,
    limit: limit + 1,
  }) as (Record<string, unknown> & { seq: number })[];
  const page = raws.slice(0, limit);
  const rows = page.map(agentRow);
  const ids = JSON.stringify(rows.map((r) => r.id));
  const held = new Map<string, string[]>();
  for (const r of ctx.agents.selectHeldTaskIdsOf.all({ ids }) as { agent_id: string; id: string }[]) {
    const list = held.get(r.agent_id);
    if (list === undefined) held.set(r.agent_id, [r.id]);
    else list.push(r.id);
  }
  const open = new Map<string, ConditionRecord[]>();
  if (rows.some((r) => r.open_conditions.length > 0)) {
    for (const c of conditionRows(ctx.watchdog.listOpenConditionsOf.all({ ids }) as ConditionRow[])) {
      const list = open.get(c.agentId);
      if (list === undefined) open.set(c.agentId, [c]);
      else list.push(c);
    }
  }
  const last = page.at(-1);
  return {
    agents: rows.map((row) => toAgent(row, open.get(row.id) ?? [], held.get(row.id) ?? [])),
    nextCursor: raws.length > limit && last !== undefined ? encodeCursor(last.seq) : null,
  };
}

export function recordAgentHeartbeats(
  ctx: SqliteContext,
  inputs: readonly AgentHeartbeatInput[],
): (AgentHeartbeatResult | null)[] {
  const now = ctx.clock.now();
  /** Agents some commands wait for (most beats find none and skip the commands query). */
  const commanded = new Set<string>();
  const watches = inputs.map((input) => {
    const raw = ctx.agents.selectBeatingAgent.get({
      id: input.agentId,
      incarnation: input.incarnation,
      withMetrics: input.metrics === undefined ? 1 : 0,
    }) as Record<string, unknown> | undefined;
    if (raw === undefined) return null;
    const row = beatingRow(raw, input.metrics);
    if (row.has_commands) commanded.add(row.id);
    const set = heartbeatColumns(row, input, now);
    ctx.agents.recordAgentHeartbeat.run({
      id: input.agentId,
      lastHeartbeatAt: set.last_heartbeat_at,
      leaseExpiresAt: set.lease_expires_at,
      heartbeatIntervalMs: set.heartbeat_interval_ms,
      heartbeatTimeoutMs: set.heartbeat_timeout_ms,
      reportedStatus: set.reported_status,
      reportedStatusSince: set.reported_status_since,
      statusMessage: set.status_message,
      metrics: jsonText(input.metrics),
      metadata: jsonText(input.metadata),
      progress: jsonText(set.progress),
      phase: set.phase,
      progressChangedAt: set.progress_changed_at,
      samples: encodeSamples(set.samples),
      gaps: JSON.stringify(set.gaps),
    });
    return toWatch({ ...row, ...set }, row.held_task_ids);
  });
  const found = watches.map((w) => w !== null);
  const commands = handOutCommands(inputs, found, (agentId) =>
    commanded.has(agentId) ? takeAgentCommands(ctx, agentId) : [],
  );
  return watches.map((watch, i) => (watch === null ? null : { watch, commands: commands[i] ?? [] }));
}

function requireChanged(changes: number, agentId: string): void {
  if (changes === 0) throw new NotFoundError('agent', agentId);
}

export function recordPoll(ctx: SqliteContext, input: { agentId: string; types: string[] }): void {
  const { changes } = ctx.agents.recordPoll.run({
    id: input.agentId,
    now: ctx.clock.now(),
    types: JSON.stringify(input.types),
  });
  requireChanged(changes, input.agentId);
}

export function endAgent(
  ctx: SqliteContext,
  input: { agentId: string; lifecycle: 'left' | 'terminated'; reason: string },
): ConditionRecord[] {
  const now = ctx.clock.now();
  const { changes } = ctx.agents.endAgent.run({ id: input.agentId, lifecycle: input.lifecycle, now });
  if (changes === 0) {
    if (ctx.agents.agentExists.get({ id: input.agentId }) === undefined) {
      throw new NotFoundError('agent', input.agentId);
    }
    return [];
  }
  return closeAllConditions(ctx, input.agentId, input.reason, now);
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

export function takeAgentCommands(ctx: SqliteContext, agentId: string): AgentCommand[] {
  const rows = ctx.agents.selectAgentCommands.all({ agentId }) as { command: string }[];
  if (rows.length > 0) ctx.agents.clearAgentCommands.run({ agentId });
  return rows.map((r) => JSON.parse(r.command) as AgentCommand);
}

export function clearAgentCommands(ctx: SqliteContext, agentId: string): void {
  ctx.agents.clearAgentCommands.run({ agentId });
}
