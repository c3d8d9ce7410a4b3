/**
 * Lease shards on SQLite (DESIGN.md §6 "Leases for coordinators"). One database file normally has one
 * coordinator, which takes every shard; the rules are the same as PostgreSQL's all the same, so two
 * processes sharing a file split them correctly. Each function runs in the caller's write transaction.
 */
import { ValidationError } from '../../core/errors.js';
import type { ShardLease } from '../store.js';
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
  if (typeof ownerId !== 'string' || ownerId.length === 0)
    throw new ValidationError('ownerId', 'must be a non-empty string');
  if (!Number.isInteger(shardCount) || shardCount < 1)
    throw new ValidationError('shardCount', 'must be an integer >= 1');
  if (!Number.isInteger(want) || want < 0) throw new ValidationError('want', 'must be an integer >= 0');
  if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new ValidationError('ttlMs', 'must be an integer >= 1');
  const now = ctx.clock.now();
  const expiresAt = now + ttlMs;
  const q = ctx.shards;
  q.renewShardLeases.run({ ownerId, expiresAt });
  const rows = q.selectShardLeases.all() as ShardRow[];
  const byShard = new Map(rows.map((r) => [r.shard, r]));
  let held = rows.filter((r) => r.owner_id === ownerId && r.shard < shardCount).length;
  for (let shard = 0; shard < shardCount && held < want; shard++) {
    const row = byShard.get(shard);
    if (row === undefined) {
      q.insertShardLease.run({ shard, ownerId, expiresAt });
      held++;
    } else if (row.owner_id !== ownerId && row.expires_at <= now) {
      if (q.takeShardLease.run({ shard, ownerId, expiresAt, now }).changes === 1) held++;
    }
  }
  return (q.selectShardLeases.all() as ShardRow[])
    .filter((r) => r.owner_id === ownerId && r.shard < shardCount)
    .map(toLease);
}

export function releaseShardLeases(ctx: SqliteContext, ownerId: string): void {
  ctx.shards.releaseShardLeases.run({ ownerId, now: ctx.clock.now() });
}

export function listShardLeases(ctx: SqliteContext): ShardLease[] {
  return (ctx.shards.selectShardLeases.all() as ShardRow[]).map(toLease);
}
