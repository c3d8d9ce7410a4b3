/** Lease shards and coordinator presence on PostgreSQL (several coordinators, docs/design.md §6). */
import {
  type CoordinatorRow,
  checkAcquire,
  checkOwner,
  checkShardList,
  checkTtl,
  presenceConflict,
  toPresence,
} from '../lease-shards.js';
import type { AnnounceCoordinatorInput, CoordinatorPresence, ShardLease } from '../store.js';
import type { PgContext } from './postgres-context.js';
import { type ShardRow, toShardLease } from './row-mapping.js';
import { SHARD_SQL } from './shard-statements.js';

export async function acquireShardLeases(
  ctx: PgContext,
  input: { ownerId: string; shardCount: number; want: number; ttlMs: number },
): Promise<ShardLease[]> {
  const { ownerId, shardCount, want, ttlMs } = input;
  checkAcquire(input);
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
  checkShardList(shards);
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
  input: AnnounceCoordinatorInput,
): Promise<CoordinatorPresence[]> {
  checkOwner(input.ownerId);
  checkTtl(input.ttlMs);
  const rows = await ctx.rows<CoordinatorRow & { mine: boolean }>(
    'announceCoordinator',
    SHARD_SQL.announceCoordinator,
    [
      ctx.now(),
      input.ownerId,
      input.ttlMs,
      input.listening === true,
      input.instance ?? null,
      input.tokens ?? null,
    ],
  );
  const held = rows.find((r) => r.id === input.ownerId && !r.mine);
  if (held !== undefined) throw presenceConflict(input.ownerId, held.expires_at);
  return rows.map(toPresence);
}

export async function listCoordinators(ctx: PgContext): Promise<CoordinatorPresence[]> {
  const rows = await ctx.rows<CoordinatorRow>('selectLiveCoordinators', SHARD_SQL.selectLiveCoordinators, [
    ctx.now(),
  ]);
  return rows.map(toPresence);
}
