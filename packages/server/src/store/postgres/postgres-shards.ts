/** Lease shards and coordinator presence on PostgreSQL (several coordinators, DESIGN.md §6). */
import { ValidationError } from '../../core/errors.js';
import type { CoordinatorPresence, ShardLease } from '../store.js';
import type { PgContext } from './postgres-context.js';
import { type ShardRow, toShardLease } from './row-mapping.js';
import { SHARD_SQL } from './shard-statements.js';

interface CoordinatorRow {
  id: string;
  last_seen_at: number;
  expires_at: number;
}

const toPresence = (r: CoordinatorRow): CoordinatorPresence => ({
  id: r.id,
  lastSeenAt: r.last_seen_at,
  expiresAt: r.expires_at,
});

function checkOwner(ownerId: unknown): void {
  if (typeof ownerId !== 'string' || ownerId.length === 0)
    throw new ValidationError('ownerId', 'must be a non-empty string');
}

function checkTtl(ttlMs: unknown): void {
  if (!Number.isInteger(ttlMs) || (ttlMs as number) < 1)
    throw new ValidationError('ttlMs', 'must be an integer >= 1');
}

export async function acquireShardLeases(
  ctx: PgContext,
  input: { ownerId: string; shardCount: number; want: number; ttlMs: number },
): Promise<ShardLease[]> {
  const { ownerId, shardCount, want, ttlMs } = input;
  checkOwner(ownerId);
  if (!Number.isInteger(shardCount) || shardCount < 1)
    throw new ValidationError('shardCount', 'must be an integer >= 1');
  if (!Number.isInteger(want) || want < 0) throw new ValidationError('want', 'must be an integer >= 0');
  checkTtl(ttlMs);
  const rows = await ctx.rows<ShardRow>('acquireShardLeases', SHARD_SQL.acquireShardLeases, [
    ctx.now(),
    ownerId,
    shardCount,
    want,
    ttlMs,
  ]);
  return rows.map(toShardLease);
}

export async function releaseShardLeases(
  ctx: PgContext,
  ownerId: string,
  shards?: readonly number[],
): Promise<void> {
  checkOwner(ownerId);
  if (shards !== undefined && (!Array.isArray(shards) || !shards.every((s) => Number.isInteger(s) && s >= 0)))
    throw new ValidationError('shards', 'must be a list of integers >= 0');
  await ctx.changes('releaseShardLeases', SHARD_SQL.releaseShardLeases, [
    ctx.now(),
    ownerId,
    shards === undefined ? null : [...shards],
  ]);
}

export async function listShardLeases(ctx: PgContext): Promise<ShardLease[]> {
  return (await ctx.rows<ShardRow>('selectShardLeases', SHARD_SQL.selectShardLeases)).map(toShardLease);
}

export async function announceCoordinator(
  ctx: PgContext,
  input: { ownerId: string; ttlMs: number },
): Promise<CoordinatorPresence[]> {
  checkOwner(input.ownerId);
  checkTtl(input.ttlMs);
  const rows = await ctx.rows<CoordinatorRow>('announceCoordinator', SHARD_SQL.announceCoordinator, [
    ctx.now(),
    input.ownerId,
    input.ttlMs,
  ]);
  return rows.map(toPresence);
}

export async function listCoordinators(ctx: PgContext): Promise<CoordinatorPresence[]> {
  const rows = await ctx.rows<CoordinatorRow>('selectLiveCoordinators', SHARD_SQL.selectLiveCoordinators, [
    ctx.now(),
  ]);
  return rows.map(toPresence);
}
