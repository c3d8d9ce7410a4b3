/**
 * The PostgreSQL WatchdogStore: conditions (opened and closed conditionally, with the agent's list of
 * open kinds kept in the same transaction, under its row lock), agent leases, baselines, status
 * counts, dependencies.
 */
import {
  CLOSED_CONDITIONS_KEPT,
  type ConditionRow,
  parseConditionToken,
  toConditionRecord,
} from '../agent-row.js';
import { type DependencyRow, toDependency } from '../dependency-row.js';
import { LEASE_SHARD_COUNT, shardOf } from '../lease-shards.js';
import type {
  AgentLeaseEntry,
  AgentStatusCount,
  AgentWatch,
  BaselineRecord,
  ConditionChange,
  ConditionRecord,
  DependencyRecord,
  MarkLostInput,
} from '../store.js';
import { type PgContext, type PgStatements, rounds } from './postgres-context.js';
import { type PgAgentRow, pgJson, pgText, pgWatch } from './row-mapping.js';
import { WATCHDOG_SQL } from './watchdog-statements.js';

/** Which condition a change or row is about, as stored (NUL characters replaced). */
function conditionKey(agentId: string, condition: string, taskId: string | null): string {
  return [agentId, condition, taskId ?? ''].map(pgText).join('\u0000');
}

/**
 * Close every open condition of an agent whose row `tx` has locked (and with `clearCommands`, drop its
 * queued commands); returns them, oldest first.
 */
export async function closeAllConditions(
  tx: PgStatements,
  agentId: string,
  reason: string,
  clearCommands: boolean,
): Promise<ConditionRecord[]> {
  const rows = await tx.rows<ConditionRow>('closeAllConditions', WATCHDOG_SQL.closeAllConditions, [
    tx.now(),
    agentId,
    pgText(reason),
    clearCommands,
  ]);
  return rows.map(toConditionRecord);
}

/**
 * One transaction: lock the agents' rows (seq order), apply the changes in rounds (each condition once
 * per statement, so a later change of the same condition sees the earlier one, as on SQLite), then
 * rewrite the touched agents' lists from their open conditions.
 */
export async function applyConditionChanges(
  ctx: PgContext,
  changes: readonly ConditionChange[],
): Promise<(ConditionRecord | null)[]> {
  if (changes.length === 0) return [];
  const agentIds = [...new Set(changes.map((c) => c.agentId))];
  return ctx.transaction(async (tx) => {
    const out: (ConditionRecord | null)[] = changes.map(() => null);
    const locked = await tx.rows<{ id: string }>('lockAgents', WATCHDOG_SQL.lockAgents, [agentIds]);
    if (locked.length === 0) return out;
    const touched = new Set<string>();
    for (const round of rounds(changes, (c) => conditionKey(c.agentId, c.condition, c.taskId))) {
      const items = round.map(({ item, index }) => ({
        i: index,
        kind: item.kind,
        agent_id: item.agentId,
        incarnation: item.kind === 'open' ? item.incarnation : null,
        condition: item.condition,
        task_id: item.taskId ?? '',
        since: item.kind === 'open' ? item.since : null,
        evidence: item.kind === 'open' ? item.evidence : null,
        opened_by: item.kind === 'open' ? item.openedBy : null,
        reason: item.kind === 'close' ? item.reason : null,
      }));
      const rows = await tx.rows<ConditionRow>('applyConditionChanges', WATCHDOG_SQL.applyConditionChanges, [
        tx.now(),
        pgJson(items),
        agentIds,
      ]);
      const written = new Map(rows.map((r) => [conditionKey(r.agent_id, r.condition, r.task_id), r]));
      for (const { item, index } of round) {
        const row = written.get(conditionKey(item.agentId, item.condition, item.taskId));
        if (row === undefined) continue;
        out[index] = toConditionRecord(row);
        touched.add(row.agent_id);
      }
    }
    if (touched.size > 0) {
      await tx.changes('refreshOpenConditions', WATCHDOG_SQL.refreshOpenConditions, [
        [...touched],
        CLOSED_CONDITIONS_KEPT,
      ]);
    }
    return out;
  });
}

export async function listConditions(
  ctx: PgContext,
  query: { agentId?: string; open?: boolean; limit?: number },
): Promise<ConditionRecord[]> {
  const rows = await ctx.rows<ConditionRow>('listConditions', WATCHDOG_SQL.listConditions, [
    query.agentId ?? null,
    query.open ?? null,
    Math.max(1, Math.min(query.limit ?? 100, 10_000)),
  ]);
  return rows.map(toConditionRecord);
}

export async function readConditions(ctx: PgContext, seqs: readonly number[]): Promise<ConditionRecord[]> {
  if (seqs.length === 0) return [];
  const rows = await ctx.rows<ConditionRow>('readConditions', WATCHDOG_SQL.readConditions, [[...seqs]]);
  const bySeq = new Map(rows.map((r) => [Number(r.seq), r]));
  return seqs.flatMap((seq) => {
    const row = bySeq.get(seq);
    return row === undefined ? [] : [toConditionRecord(row)];
  });
}

export async function getAgentWatches(ctx: PgContext, agentIds: readonly string[]): Promise<AgentWatch[]> {
  if (agentIds.length === 0) return [];
  const rows = await ctx.rows<PgAgentRow & { held_task_ids: string[] }>(
    'selectAgentWatches',
    WATCHDOG_SQL.selectAgentWatches,
    [[...agentIds]],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return agentIds.flatMap((id) => {
    const row = byId.get(id);
    return row === undefined ? [] : [pgWatch(row, row.held_task_ids)];
  });
}

interface LeaseRow {
  id: string;
  incarnation: number;
  lease_expires_at: number;
  last_heartbeat_at: number | null;
  started_at: number;
  heartbeat_interval_ms: number;
  heartbeat_timeout_ms: number;
}

const ALL_SHARDS = Array.from({ length: LEASE_SHARD_COUNT }, (_, i) => i);

export async function dueAgentLeases(
  ctx: PgContext,
  query: { dueBy: number; shards?: { ids: number[]; count: number } },
): Promise<AgentLeaseEntry[]> {
  const { shards } = query;
  if (shards !== undefined && shards.ids.length === 0) return [];
  // The stored shard is shardOf(id) over LEASE_SHARD_COUNT; another count filters here instead.
  const stored = shards === undefined || shards.count === LEASE_SHARD_COUNT;
  const rows = await ctx.rows<LeaseRow>('dueAgentLeases', WATCHDOG_SQL.dueAgentLeases, [
    query.dueBy,
    stored && shards !== undefined ? shards.ids : ALL_SHARDS,
  ]);
  const wanted = stored ? null : new Set(shards.ids);
  return rows
    .filter((r) => wanted === null || wanted.has(shardOf(r.id, shards!.count)))
    .map((r) => ({
      agentId: r.id,
      incarnation: r.incarnation,
      leaseExpiresAt: r.lease_expires_at,
      lastHeartbeatAt: r.last_heartbeat_at,
      startedAt: r.started_at,
      heartbeatIntervalMs: r.heartbeat_interval_ms,
      heartbeatTimeoutMs: r.heartbeat_timeout_ms,
    }));
}

/** One statement per round (each agent once: a second input for an agent sees the first's effect). */
export async function markAgentsLost(
  ctx: PgContext,
  inputs: readonly MarkLostInput[],
): Promise<(ConditionRecord | null)[]> {
  const out: (ConditionRecord | null)[] = inputs.map(() => null);
  for (const round of rounds(inputs, (input) => input.agentId)) {
    const items = round.map(({ item, index }) => ({
      i: index,
      id: item.agentId,
      incarnation: item.incarnation,
      evidence: item.evidence,
      opened_by: item.openedBy,
    }));
    const rows = await ctx.rows<ConditionRow>('markAgentsLost', WATCHDOG_SQL.markAgentsLost, [
      ctx.now(),
      pgJson(items),
      items.map((b) => b.id),
    ]);
    const opened = new Map(rows.map((r) => [r.agent_id, r]));
    for (const { item, index } of round) {
      const row = opened.get(pgText(item.agentId));
      if (row !== undefined) out[index] = toConditionRecord(row);
    }
  }
  return out;
}

export async function saveBaselines(
  ctx: PgContext,
  records: readonly Omit<BaselineRecord, 'updatedAt'>[],
): Promise<void> {
  // One row per key (an upsert cannot write a row twice): the last of a key wins, as saved in order.
  const last = new Map<string, Omit<BaselineRecord, 'updatedAt'>>();
  for (const r of records) last.set(JSON.stringify([r.agentType, r.metric, r.coordinatorId]), r);
  if (last.size === 0) return;
  const items = [...last.values()].map((r) => ({
    agent_type: r.agentType,
    metric: r.metric,
    coordinator_id: r.coordinatorId,
    histogram: r.histogram,
  }));
  await ctx.changes('saveBaselines', WATCHDOG_SQL.saveBaselines, [ctx.now(), pgJson(items)]);
}

export async function listBaselines(ctx: PgContext): Promise<BaselineRecord[]> {
  const rows = await ctx.rows<{
    agent_type: string;
    metric: string;
    coordinator_id: string;
    histogram: number[];
    updated_at: number;
  }>('listBaselines', WATCHDOG_SQL.listBaselines);
  return rows.map((r) => ({
    agentType: r.agent_type,
    metric: r.metric,
    coordinatorId: r.coordinator_id,
    histogram: r.histogram,
    updatedAt: r.updated_at,
  }));
}

export async function agentStatusCounts(ctx: PgContext): Promise<AgentStatusCount[]> {
  const rows = await ctx.rows<{
    lifecycle: AgentStatusCount['lifecycle'];
    reported_status: AgentStatusCount['reportedStatus'];
    open_conditions: string[];
    count: number;
  }>('agentStatusCounts', WATCHDOG_SQL.agentStatusCounts);
  return rows.map((r) => ({
    lifecycle: r.lifecycle,
    reportedStatus: r.reported_status,
    openConditions: r.open_conditions.map((t) => parseConditionToken(t).condition),
    count: r.count,
  }));
}

export async function saveDependency(
  ctx: PgContext,
  d: Omit<DependencyRecord, 'version'>,
): Promise<DependencyRecord> {
  const [row] = await ctx.rows<DependencyRow>('saveDependency', WATCHDOG_SQL.saveDependency, [
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
  return (await ctx.rows<DependencyRow>('listDependencies', WATCHDOG_SQL.listDependencies)).map(toDependency);
}
