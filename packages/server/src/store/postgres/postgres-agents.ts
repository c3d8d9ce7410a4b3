/**
 * The PostgreSQL AgentStore: slots and incarnations, lookups, heartbeats, polls, leaving, commands.
 * A registration that replaces an incarnation, and an agent that ends, close its conditions in the
 * same transaction that locked its row (see watchdog-statements.ts).
 */
import type { Agent, AgentCommand } from '@rouse/protocol';
import { NotFoundError } from '../../core/errors.js';
import { type AgentRow, type ConditionRow, toAgent, toConditionRecord } from '../agent-row.js';
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
import { AGENT_SQL } from './agent-statements.js';
import { type PgContext, rounds } from './postgres-context.js';
import { closeAllConditions } from './postgres-watchdog.js';
import { type PgAgentRow, pgJson, pgText, pgWatch } from './row-mapping.js';

/** An agents row read for the wire: with the tasks it holds and its open conditions (rows as JSON). */
interface WireAgentRow extends AgentRow {
  current_task_ids: string[];
  conditions: ConditionRow[];
}

function wireAgent(r: WireAgentRow): Agent {
  return toAgent(r, r.conditions.map(toConditionRecord), r.current_task_ids);
}

const REPLACED = 'replaced by a new incarnation';

export async function registerAgent(ctx: PgContext, agent: NewAgent): Promise<Registration> {
  const params = [
    ctx.now(),
    agent.id,
    pgText(agent.key),
    pgText(agent.agentType),
    pgText(agent.name),
    pgText(agent.host),
    agent.pid,
    pgJson(agent.taskTypes),
    pgJson(agent.labels),
    pgJson(agent.requires),
    pgText(agent.supervisorId),
    agent.tokenHash,
    pgText(agent.policy),
    shardOf(agent.id),
    agent.heartbeatIntervalMs,
    agent.startupTimeoutMs,
    agent.exclusive === true && agent.key !== null,
  ];
  const registered = (row: WireAgentRow | undefined): WireAgentRow => ({ ...row!, conditions: [] });
  if (agent.key === null) {
    const [row] = await ctx.rows<WireAgentRow>('registerAgent', AGENT_SQL.registerAgent, params);
    return { agent: wireAgent(registered(row)), replacedIncarnation: null, closed: [] };
  }
  // Under a key, the slot may exist: its row stays locked while the replaced incarnation's
  // conditions close and its commands go.
  return ctx.transaction(async (tx) => {
    const [row] = await tx.rows<WireAgentRow>('registerAgent', AGENT_SQL.registerAgent, params);
    if (row === undefined) {
      const [holder] = await tx.rows<{
        id: string;
        incarnation: number;
        leaseExpiresAt: string | number | null;
      }>('selectAgentByKey', AGENT_SQL.selectAgentByKey, [agent.agentType, agent.key]);
      throw keyInUseError(agent.key!, {
        id: holder!.id,
        incarnation: Number(holder!.incarnation),
        leaseExpiresAt: holder!.leaseExpiresAt === null ? null : Number(holder!.leaseExpiresAt),
      });
    }
    const agentRow = registered(row);
    if (agentRow.incarnation === 1) {
      return { agent: wireAgent(agentRow), replacedIncarnation: null, closed: [] };
    }
    const closed = await closeAllConditions(tx, agentRow.id, REPLACED, true);
    return { agent: wireAgent(agentRow), replacedIncarnation: agentRow.incarnation - 1, closed };
  });
}

export async function getAgent(ctx: PgContext, id: string): Promise<Agent | null> {
  const [row] = await ctx.rows<WireAgentRow>('selectAgent', AGENT_SQL.selectAgent, [id]);
  return row === undefined ? null : wireAgent(row);
}

export async function resolveAgentToken(ctx: PgContext, tokenHash: string): Promise<AgentTokenOwner | null> {
  const [row] = await ctx.rows<AgentTokenOwner>('selectTokenOwner', AGENT_SQL.selectTokenOwner, [tokenHash]);
  return row ?? null;
}

export async function listAgents(
  ctx: PgContext,
  query: AgentQuery = {},
): Promise<{ agents: Agent[]; nextCursor: string | null }> {
  const limit = query.limit ?? Number.MAX_SAFE_INTEGER;
  const rows = await ctx.rows<WireAgentRow & { seq: string | number }>('listAgents', AGENT_SQL.listAgents, [
    query.taskType ?? null,
    query.agentType ?? null,
    query.statuses === undefined ? null : [...query.statuses],
    query.cursor ? decodeCursor(query.cursor) : 0,
    Math.min(limit + 1, Number.MAX_SAFE_INTEGER),
  ]);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    agents: page.map(wireAgent),
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(Number(last.seq)) : null,
  };
}

/** A row of recordAgentHeartbeats: the agent as its beat left it, and the commands it took. */
interface BeatRow extends PgAgentRow {
  commands: AgentCommand[] | null;
  held_task_ids: string[];
}

const byAgent = (input: AgentHeartbeatInput): string => input.agentId;

/**
 * One statement per round (each agent once; a second beat of one agent in the batch is applied after
 * the first, as SQLite does). An agent's commands go with the first of its inputs that finds it
 * active in its incarnation (see handOutCommands).
 */
export async function recordAgentHeartbeats(
  ctx: PgContext,
  inputs: readonly AgentHeartbeatInput[],
): Promise<(AgentHeartbeatResult | null)[]> {
  const out: (AgentHeartbeatResult | null)[] = inputs.map(() => null);
  const given = new Set<string>();
  for (const round of rounds(inputs, byAgent)) {
    const items = round.map(({ item }) => ({
      id: item.agentId,
      incarnation: item.incarnation,
      take: !given.has(item.agentId),
      status: item.status ?? null,
      status_message: item.statusMessage ?? null,
      metrics: item.metrics ?? null,
      metadata: item.metadata ?? null,
      progress:
        item.progress === undefined ? null : { value: item.progress.value, phase: item.progress.phase },
      lease_ms: item.leaseMs,
      quiet_ms: item.quietPeriodMs,
      interval_ms: item.heartbeatIntervalMs,
      sample:
        item.sample === undefined
          ? null
          : [item.sample.rssBytes, item.sample.cpuPercent, item.sample.iterationMs],
      spacing_ms: item.sampleSpacingMs,
      max_samples: item.maxSamples,
      max_gaps: item.maxGaps,
    }));
    const rows = await ctx.rows<BeatRow>('recordAgentHeartbeats', AGENT_SQL.recordAgentHeartbeats, [
      ctx.now(),
      pgJson(items),
      items.map((b) => b.id),
    ]);
    const written = new Map(rows.map((r) => [r.id, r]));
    for (const { item, index } of round) {
      const row = written.get(item.agentId);
      if (row === undefined) continue;
      out[index] = { commands: row.commands ?? [], watch: pgWatch(row, row.held_task_ids) };
      given.add(item.agentId);
    }
  }
  return out;
}

function requireChanged(changes: number, agentId: string): void {
  if (changes === 0) throw new NotFoundError('agent', agentId);
}

export async function recordPoll(ctx: PgContext, input: { agentId: string; types: string[] }): Promise<void> {
  const changes = await ctx.changes('recordPoll', AGENT_SQL.recordPoll, [
    ctx.now(),
    input.agentId,
    pgJson(input.types),
  ]);
  requireChanged(changes, input.agentId);
}

export function endAgent(
  ctx: PgContext,
  input: { agentId: string; lifecycle: 'left' | 'terminated'; reason: string },
): Promise<ConditionRecord[]> {
  return ctx.transaction(async (tx) => {
    const [r] = await tx.rows<{ found: boolean; ended: boolean }>('endAgent', AGENT_SQL.endAgent, [
      tx.now(),
      input.agentId,
      input.lifecycle,
    ]);
    if (!r?.found) throw new NotFoundError('agent', input.agentId);
    if (!r.ended) return [];
    return closeAllConditions(tx, input.agentId, input.reason, false);
  });
}

export async function queueAgentCommand(ctx: PgContext, input: QueueAgentCommandInput): Promise<void> {
  const { agentId, command } = input;
  await ctx.changes('queueAgentCommand', AGENT_SQL.queueAgentCommand, [
    ctx.now(),
    agentId,
    command.type,
    command.taskId ?? null,
    pgJson(command),
    Math.max(1, Math.floor(input.keep)),
    input.maxAgeMs,
  ]);
}

export async function takeAgentCommands(ctx: PgContext, agentId: string): Promise<AgentCommand[]> {
  const rows = await ctx.rows<{ seq: string | number; command: AgentCommand }>(
    'takeAgentCommands',
    AGENT_SQL.takeAgentCommands,
    [agentId],
  );
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map((r) => r.command);
}

export async function clearAgentCommands(ctx: PgContext, agentId: string): Promise<void> {
  await ctx.changes('clearAgentCommands', AGENT_SQL.clearAgentCommands, [agentId]);
}
