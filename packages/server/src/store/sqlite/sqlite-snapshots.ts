/** The SQLite SnapshotStore: agent snapshots as a base plus deltas (see `snapshot-store.ts`). */
import type { JsonObject, ResultRef } from '@rouse/protocol';
import type {
  AppendSnapshotDeltaInput,
  AppendSnapshotDeltaResult,
  SnapshotBaseInput,
  SnapshotBaseWritten,
  SnapshotHead,
  StoredSnapshot,
} from '../store.js';
import type { SqliteContext } from './sqlite-context.js';

interface HeadRow {
  agent_id: string;
  version: number;
  base_ref: string | null;
  base_bytes: number;
  delta_count: number;
  deltas_bytes: number;
  ttl_ms: number;
  updated_at: number;
  expires_at: number;
}

const refOf = (text: string | null): ResultRef | null =>
  text === null ? null : (JSON.parse(text) as ResultRef);

function toHead(r: HeadRow): SnapshotHead {
  return {
    agentId: r.agent_id,
    version: r.version,
    baseRef: refOf(r.base_ref),
    baseBytes: r.base_bytes,
    deltaCount: r.delta_count,
    deltasBytes: r.deltas_bytes,
    ttlMs: r.ttl_ms,
    updatedAt: r.updated_at,
    expiresAt: r.expires_at,
  };
}

function baseParams(ctx: SqliteContext, input: SnapshotBaseInput) {
  const now = ctx.clock.now();
  return {
    agentId: input.agentId,
    base: input.base === null ? null : JSON.stringify(input.base),
    baseRef: input.baseRef === null ? null : JSON.stringify(input.baseRef),
    baseBytes: input.baseBytes,
    ttlMs: input.ttlMs,
    now,
    expiresAt: now + input.ttlMs,
  };
}

/** The blob the write replaced: the old base's, unless the new base is the same blob. */
function replaced(before: HeadRow | undefined, head: SnapshotHead): ResultRef | null {
  const old = refOf(before?.base_ref ?? null);
  return old !== null && old.key !== head.baseRef?.key ? old : null;
}

export function putSnapshot(ctx: SqliteContext, input: SnapshotBaseInput): SnapshotBaseWritten {
  const before = ctx.snapshots.selectHead.get({ agentId: input.agentId }) as HeadRow | undefined;
  const head = toHead(ctx.snapshots.putSnapshot.get(baseParams(ctx, input)) as HeadRow);
  return { head, replacedRef: replaced(before, head) };
}

export function compactSnapshot(
  ctx: SqliteContext,
  input: SnapshotBaseInput & { expectedVersion: number },
): SnapshotBaseWritten | null {
  const before = ctx.snapshots.selectHead.get({ agentId: input.agentId }) as HeadRow | undefined;
  const row = ctx.snapshots.compactSnapshot.get({
    ...baseParams(ctx, input),
    expectedVersion: input.expectedVersion,
  }) as HeadRow | undefined;
  if (row === undefined) return null;
  const head = toHead(row);
  return { head, replacedRef: replaced(before, head) };
}

export function appendSnapshotDelta(
  ctx: SqliteContext,
  input: AppendSnapshotDeltaInput,
): AppendSnapshotDeltaResult {
  const now = ctx.clock.now();
  const row = ctx.snapshots.appendDelta.get({
    agentId: input.agentId,
    patch: JSON.stringify(input.patch),
    patchBytes: input.patchBytes,
    ttlMs: input.ttlMs,
    now,
    maxDeltas: input.maxDeltas,
    maxDeltasBytes: input.maxDeltasBytes,
  }) as HeadRow | undefined;
  if (row !== undefined) return { outcome: 'appended', head: toHead(row) };
  const current = ctx.snapshots.selectHead.get({ agentId: input.agentId }) as HeadRow | undefined;
  if (current === undefined || current.expires_at <= now) return { outcome: 'missing' };
  return { outcome: 'full', head: toHead(current) };
}

export function getSnapshot(ctx: SqliteContext, agentId: string): StoredSnapshot | null {
  const row = ctx.snapshots.selectSnapshot.get({ agentId, now: ctx.clock.now() }) as
    | (HeadRow & { base: string | null; deltas: string })
    | undefined;
  if (row === undefined) return null;
  const { deltaCount: _, ...head } = toHead(row);
  return {
    ...head,
    base: row.base === null ? null : (JSON.parse(row.base) as JsonObject),
    deltas: JSON.parse(row.deltas) as JsonObject[],
  };
}

export function deleteExpiredSnapshots(
  ctx: SqliteContext,
  input: { limit: number },
): { deleted: number; blobRefs: ResultRef[] } {
  const now = ctx.clock.now();
  const expired = ctx.snapshots.selectExpired.all({ now, limit: Math.max(1, Math.floor(input.limit)) }) as {
    agent_id: string;
    base_ref: string | null;
  }[];
  let deleted = 0;
  const blobRefs: ResultRef[] = [];
  for (const row of expired) {
    deleted += ctx.snapshots.deleteExpired.run({ agentId: row.agent_id, now }).changes;
    const ref = refOf(row.base_ref);
    if (ref !== null) blobRefs.push(ref);
  }
  return { deleted, blobRefs };
}
