/**
 * The SQLite WatchdogStore: conditions (opened and closed conditionally, with the agent's list of
 * open kinds kept in the same transaction), agent leases, baselines, status counts, dependencies.
 */
import { CLOSED_CONDITIONS_KEPT, type ConditionRow, parseConditionToken, toWatch } from '../agent-row.js';
import { type DependencyRow, toDependency } from '../dependency-row.js';
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
import { agentRow, conditionRows } from './agent-rows.js';
import type { SqliteContext } from './sqlite-context.js';

function refresh(ctx: SqliteContext, agentId: string): void {
  ctx.watchdog.refreshOpenConditions.run({ agentId });
}

export function closeAllConditions(
  ctx: SqliteContext,
  agentId: string,
  reason: string,
  now: number,
): ConditionRecord[] {
  const closed = conditionRows(
    ctx.watchdog.closeAllConditions.all({ agentId, reason, now }) as ConditionRow[],
  );
  if (closed.length > 0) refresh(ctx, agentId);
  return closed.sort((a, b) => a.seq - b.seq);
}

export function applyConditionChanges(
  ctx: SqliteContext,
  changes: readonly ConditionChange[],
): (ConditionRecord | null)[] {
  const now = ctx.clock.now();
  const touched = new Set<string>();
  const results = changes.map((change): ConditionRecord | null => {
    const taskId = change.taskId ?? '';
    let row: ConditionRow | undefined;
    if (change.kind === 'open') {
      const active = ctx.watchdog.activeAgentType.get({
        agentId: change.agentId,
        incarnation: change.incarnation,
      }) as { agent_type: string } | undefined;
      if (active === undefined) return null;
      row = ctx.watchdog.openCondition.get({
        agentId: change.agentId,
        incarnation: change.incarnation,
        agentType: active.agent_type,
        condition: change.condition,
        taskId,
        since: change.since,
        evidence: JSON.stringify(change.evidence),
        openedBy: change.openedBy,
        now,
      }) as ConditionRow | undefined;
    } else {
      row = ctx.watchdog.closeCondition.get({
        agentId: change.agentId,
        condition: change.condition,
        taskId,
        reason: change.reason,
        now,
      }) as ConditionRow | undefined;
    }
    if (row === undefined) return null;
    touched.add(change.agentId);
    return conditionRows([row])[0] ?? null;
  });
  for (const agentId of touched) {
    refresh(ctx, agentId);
    ctx.watchdog.trimClosedConditions.run({ agentId, keep: CLOSED_CONDITIONS_KEPT });
  }
  return results;
}

export function listConditions(
  ctx: SqliteContext,
  query: { agentId?: string; open?: boolean; limit?: number },
): ConditionRecord[] {
  const rows = ctx.watchdog.listConditions.all({
    agentId: query.agentId ?? null,
    open: query.open === undefined ? null : query.open ? 1 : 0,
    limit: Math.max(1, Math.min(query.limit ?? 100, 10_000)),
  }) as ConditionRow[];
  return conditionRows(rows);
}

export function readConditions(ctx: SqliteContext, seqs: readonly number[]): ConditionRecord[] {
  const rows: ConditionRow[] = [];
  for (const seq of seqs) {
    const row = ctx.watchdog.selectCondition.get({ seq }) as ConditionRow | undefined;
    if (row !== undefined) rows.push(row);
  }
  return conditionRows(rows);
}

export function getAgentWatches(ctx: SqliteContext, agentIds: readonly string[]): AgentWatch[] {
  return agentIds.flatMap((id) => {
    const raw = ctx.agents.selectAgent.get({ id }) as Record<string, unknown> | undefined;
    return raw === undefined ? [] : [toWatch(agentRow(raw), ctx.heldTaskIds(id))];
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

export function dueAgentLeases(
  ctx: SqliteContext,
  query: { dueBy: number; shards?: { ids: number[]; count: number } },
): AgentLeaseEntry[] {
  const shards = query.shards?.ids ?? Array.from({ length: 64 }, (_, i) => i);
  const rows = ctx.watchdog.dueAgentLeases.all({
    dueBy: query.dueBy,
    shards: JSON.stringify(shards),
  }) as LeaseRow[];
  return rows.map((r) => ({
    agentId: r.id,
    incarnation: r.incarnation,
    leaseExpiresAt: r.lease_expires_at,
    lastHeartbeatAt: r.last_heartbeat_at,
    startedAt: r.started_at,
    heartbeatIntervalMs: r.heartbeat_interval_ms,
    heartbeatTimeoutMs: r.heartbeat_timeout_ms,
  }));
}

export function markAgentsLost(
  ctx: SqliteContext,
  inputs: readonly MarkLostInput[],
): (ConditionRecord | null)[] {
  const now = ctx.clock.now();
  return inputs.map((input) => {
    const lost = ctx.watchdog.loseAgent.get({
      id: input.agentId,
      incarnation: input.incarnation,
      now,
    });
    if (lost === undefined) return null;
    const [opened] = applyConditionChanges(ctx, [
      {
        kind: 'open',
        agentId: input.agentId,
        incarnation: input.incarnation,
        condition: 'heartbeat_timeout',
        taskId: null,
        since: now,
        evidence: input.evidence,
        openedBy: input.openedBy,
      },
    ]);
    return opened ?? null;
  });
}

export function saveBaselines(
  ctx: SqliteContext,
  records: readonly Omit<BaselineRecord, 'updatedAt'>[],
): void {
  const now = ctx.clock.now();
  for (const r of records) {
    ctx.watchdog.saveBaseline.run({
      agentType: r.agentType,
      metric: r.metric,
      coordinatorId: r.coordinatorId,
      histogram: JSON.stringify(r.histogram),
      now,
    });
  }
}

export function listBaselines(ctx: SqliteContext): BaselineRecord[] {
  const rows = ctx.watchdog.listBaselines.all() as {
    agent_type: string;
    metric: string;
    coordinator_id: string;
    histogram: string;
    updated_at: number;
  }[];
  return rows.map((r) => ({
    agentType: r.agent_type,
    metric: r.metric,
    coordinatorId: r.coordinator_id,
    histogram: JSON.parse(r.histogram) as number[],
    updatedAt: r.updated_at,
  }));
}

export function agentStatusCounts(ctx: SqliteContext): AgentStatusCount[] {
  const rows = ctx.watchdog.agentStatusCounts.all() as {
    lifecycle: AgentStatusCount['lifecycle'];
    reported_status: AgentStatusCount['reportedStatus'];
    open_conditions: string;
    count: number;
  }[];
  return rows.map((r) => ({
    lifecycle: r.lifecycle,
    reportedStatus: r.reported_status,
    openConditions: (JSON.parse(r.open_conditions) as string[]).map((t) => parseConditionToken(t).condition),
    count: r.count,
  }));
}

export function saveDependency(ctx: SqliteContext, d: Omit<DependencyRecord, 'version'>): DependencyRecord {
  const row = ctx.watchdog.saveDependency.get({
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
  return (ctx.watchdog.listDependencies.all() as DependencyRow[]).map(toDependency);
}
