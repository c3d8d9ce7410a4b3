/**
 * Lease shards: with several coordinators, lease expiry is split into a fixed number of shards, each
 * held by one coordinator under a renewable lease in the store (DESIGN.md §6). A task's shard is fixed
 * at creation and stored with it, so a shard's overdue leases are one indexed query.
 */

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
