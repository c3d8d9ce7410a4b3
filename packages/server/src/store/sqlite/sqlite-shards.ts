/**
 * Lease shards and coordinator presence on SQLite (docs/design.md §8). One
 * database file normally has one coordinator, which takes every shard; the rules are the same as
 * PostgreSQL's all the same, so two processes sharing a file split them correctly. Each function runs
 * in the caller's transaction (writes in a write transaction).
 */
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
import type { SqliteContext } from './sqlite-context.js';

interface ShardRow {
  shard: number;
  owner_id: string;
  epoch: number;
  expires_at: number;
}

const toLease = (r: ShardRow): ShardLease => ({
  shard: r.shard,
  ownerId: r.owner_id,
  epoch: r.epoch,
  expiresAt: r.expires_at,
});

export function acquireShardLeases(
  ctx: SqliteContext,
  input: { ownerId: string; shardCount: number; want: number; ttlMs: number },
): ShardLease[] {
  const { ownerId, shardCount, want, ttlMs } = input;
  checkAcquire(input);
  const now = ctx.clock.now();
  const expiresAt = now + ttlMs;
  const q = ctx.shards;
  q.renewShardLeases.run({ ownerId, expiresAt, now });
  const rows = q.selectShardLeases.all() as ShardRow[];
  const byShard = new Map(rows.map((r) => [r.shard, r]));
  let held = rows.filter((r) => r.owner_id === ownerId && r.expires_at > now && r.shard < shardCount).length;
  for (let shard = 0; shard < shardCount && held < want; shard++) {
    const row = byShard.get(shard);
    if (row === undefined) {
      q.insertShardLease.run({ shard, ownerId, expiresAt });
      held++;
    } else if (row.expires_at <= now) {
      if (q.takeShardLease.run({ shard, ownerId, expiresAt, now }).changes === 1) held++;
    }
  }
  return (q.selectShardLeases.all() as ShardRow[])
    .filter((r) => r.owner_id === ownerId && r.expires_at > now && r.shard < shardCount)
    .map(toLease);
}

export function releaseShardLeases(ctx: SqliteContext, ownerId: string, shards?: readonly number[]): void {
  checkOwner(ownerId);
  const now = ctx.clock.now();
  if (shards === undefined) {
    ctx.shards.releaseShardLeases.run({ ownerId, now });
    ctx.shards.deleteCoordinator.run({ id: ownerId });
    return;
  }
  checkShardList(shards);
  for (const shard of shards) ctx.shards.releaseShardLease.run({ shard, ownerId, now });
}

export function listShardLeases(ctx: SqliteContext): ShardLease[] {
  return (ctx.shards.selectShardLeases.all() as ShardRow[]).map(toLease);
}

export function announceCoordinator(
  ctx: SqliteContext,
  input: AnnounceCoordinatorInput,
): CoordinatorPresence[] {
  checkOwner(input.ownerId);
  checkTtl(input.ttlMs);
  const now = ctx.clock.now();
  ctx.shards.deleteExpiredCoordinators.run({ now });
  if (input.instance !== undefined) {
    const held = ctx.shards.selectCoordinatorInstance.get({ id: input.ownerId }) as
      | { instance: string | null; expires_at: number }
      | undefined;
    // Expired rows were just deleted: one still here is live.
    if (held !== undefined && held.instance !== input.instance)
      throw presenceConflict(input.ownerId, held.expires_at);
  }
  ctx.shards.upsertCoordinator.run({
    id: input.ownerId,
    now,
    expiresAt: now + input.ttlMs,
    listening: input.listening === true ? 1 : 0,
    instance: input.instance ?? null,
    tokens: input.tokens ?? null,
  });
  return listCoordinators(ctx);
}

export function listCoordinators(ctx: SqliteContext): CoordinatorPresence[] {
  const rows = ctx.shards.selectLiveCoordinators.all({ now: ctx.clock.now() }) as CoordinatorRow[];
  return rows.map(toPresence);
}
