/**
 * Lease shards: with several coordinators, lease expiry is split into a fixed number of shards, each
 * held by one coordinator under a renewable lease in the store (docs/design.md §6). A task's shard is fixed
 * at creation and stored with it, so a shard's overdue leases are one indexed query.
 */
import { RouseError, ValidationError } from '../core/errors.js';
import type { CoordinatorPresence } from './store.js';

/** Fixed for the life of a database: changing it would move tasks between shards. */
export const LEASE_SHARD_COUNT = 64;

/** FNV-1a (32-bit) of the task id, modulo `count`. Stable across processes and backends. */
export function shardOf(taskId: string, count = LEASE_SHARD_COUNT): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < taskId.length; i++) {
    h ^= taskId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % count;
}

/** A `coordinators` row, as both backends name its columns. */
export interface CoordinatorRow {
  id: string;
  last_seen_at: number;
  expires_at: number;
  /** boolean in PostgreSQL, 0/1 in SQLite. */
  listening: boolean | number;
  tokens: string | null;
}

export const toPresence = (r: CoordinatorRow): CoordinatorPresence => ({
  id: r.id,
  lastSeenAt: r.last_seen_at,
  expiresAt: r.expires_at,
  listening: Boolean(r.listening),
  tokens: r.tokens ?? null,
});

/** A live presence under `ownerId` belongs to another instance (`announceCoordinator` with `instance`). */
export function presenceConflict(ownerId: string, expiresAt: number): RouseError {
  return new RouseError(
    'conflict',
    `another live coordinator goes by the id "${ownerId}": give each coordinator its own id, or leave it out for a random one`,
    { coordinatorId: ownerId, expiresAt },
  );
}

/** Input checks of the shard-lease operations, the same for every backend. */
export function checkOwner(ownerId: unknown): void {
  if (typeof ownerId !== 'string' || ownerId.length === 0)
    throw new ValidationError('ownerId', 'must be a non-empty string');
}

export function checkTtl(ttlMs: unknown): void {
  if (!Number.isInteger(ttlMs) || (ttlMs as number) < 1)
    throw new ValidationError('ttlMs', 'must be an integer >= 1');
}

export function checkAcquire(input: {
  ownerId: unknown;
  shardCount: number;
  want: number;
  ttlMs: unknown;
}): void {
  checkOwner(input.ownerId);
  if (!Number.isInteger(input.shardCount) || input.shardCount < 1)
    throw new ValidationError('shardCount', 'must be an integer >= 1');
  if (!Number.isInteger(input.want) || input.want < 0)
    throw new ValidationError('want', 'must be an integer >= 0');
  checkTtl(input.ttlMs);
}

export function checkShardList(shards: readonly number[] | undefined): void {
  if (shards !== undefined && (!Array.isArray(shards) || !shards.every((s) => Number.isInteger(s) && s >= 0)))
    throw new ValidationError('shards', 'must be a list of integers >= 0');
}
