/** The PostgreSQL SnapshotStore (see `snapshot-store.ts`): each operation one conditional statement. */
import type { JsonObject, ResultRef } from '@rouse/protocol';
import type {
  AppendSnapshotDeltaInput,
  AppendSnapshotDeltaResult,
  SnapshotBaseInput,
  SnapshotBaseWritten,
  SnapshotHead,
  StoredSnapshot,
} from '../store.js';
import type { PgContext } from './postgres-context.js';
import { pgJson } from './row-mapping.js';
import { SNAPSHOT_SQL } from './snapshot-statements.js';

interface HeadRow {
  agent_id: string;
  version: number;
  base_ref: ResultRef | null;
  base_bytes: number;
  delta_count: number;
  deltas_bytes: number;
  ttl_ms: number;
  updated_at: number;
  expires_at: number;
}

function toHead(r: HeadRow): SnapshotHead {
  return {
    agentId: r.agent_id,
    version: r.version,
    baseRef: r.base_ref,
    baseBytes: r.base_bytes,
    deltaCount: r.delta_count,
    deltasBytes: r.deltas_bytes,
    ttlMs: r.ttl_ms,
    updatedAt: r.updated_at,
    expiresAt: r.expires_at,
  };
}

function baseParams(ctx: PgContext, input: SnapshotBaseInput): unknown[] {
  return [
    ctx.now(),
    input.agentId,
    input.base === null ? null : JSON.stringify(input.base),
    input.baseRef === null ? null : pgJson(input.baseRef),
    input.baseBytes,
    input.ttlMs,
  ];
}

function written(row: HeadRow & { replaced_ref: ResultRef | null }): SnapshotBaseWritten {
  const head = toHead(row);
  const old = row.replaced_ref;
  return { head, replacedRef: old !== null && old.key !== head.baseRef?.key ? old : null };
}

export async function putSnapshot(ctx: PgContext, input: SnapshotBaseInput): Promise<SnapshotBaseWritten> {
  const [row] = await ctx.rows<HeadRow & { replaced_ref: ResultRef | null }>(
    'putSnapshot',
    SNAPSHOT_SQL.putSnapshot,
    baseParams(ctx, input),
  );
  return written(row!);
}

export async function compactSnapshot(
  ctx: PgContext,
  input: SnapshotBaseInput & { expectedVersion: number },
): Promise<SnapshotBaseWritten | null> {
  const [row] = await ctx.rows<HeadRow & { replaced_ref: ResultRef | null }>(
    'compactSnapshot',
    SNAPSHOT_SQL.compactSnapshot,
    [...baseParams(ctx, input), input.expectedVersion],
  );
  return row === undefined ? null : written(row);
}

export async function appendSnapshotDelta(
  ctx: PgContext,
  input: AppendSnapshotDeltaInput,
): Promise<AppendSnapshotDeltaResult> {
  const [row] = await ctx.rows<HeadRow>('appendSnapshotDelta', SNAPSHOT_SQL.appendDelta, [
    ctx.now(),
    input.agentId,
    JSON.stringify(input.patch),
    input.patchBytes,
    input.ttlMs,
    input.maxDeltas,
    input.maxDeltasBytes,
  ]);
  if (row !== undefined) return { outcome: 'appended', head: toHead(row) };
  const [current] = await ctx.rows<HeadRow & { live: boolean }>(
    'selectSnapshotHead',
    SNAPSHOT_SQL.selectHead,
    [ctx.now(), input.agentId],
  );
  if (current === undefined || !current.live) return { outcome: 'missing' };
  return { outcome: 'full', head: toHead(current) };
}

export async function getSnapshot(ctx: PgContext, agentId: string): Promise<StoredSnapshot | null> {
  const [row] = await ctx.rows<HeadRow & { base: string | null; deltas: string[] }>(
    'selectSnapshot',
    SNAPSHOT_SQL.selectSnapshot,
    [ctx.now(), agentId],
  );
  if (row === undefined) return null;
  const { deltaCount: _, ...head } = toHead(row);
  return {
    ...head,
    base: row.base === null ? null : (JSON.parse(row.base) as JsonObject),
    deltas: row.deltas.map((d) => JSON.parse(d) as JsonObject),
  };
}

export async function deleteExpiredSnapshots(
  ctx: PgContext,
  input: { limit: number },
): Promise<{ deleted: number; blobRefs: ResultRef[] }> {
  const rows = await ctx.rows<{ base_ref: ResultRef | null }>(
    'deleteExpiredSnapshots',
    SNAPSHOT_SQL.deleteExpired,
    [ctx.now(), Math.max(1, Math.floor(input.limit))],
  );
  return {
    deleted: rows.length,
    blobRefs: rows.flatMap((r) => (r.base_ref === null ? [] : [r.base_ref])),
  };
}
