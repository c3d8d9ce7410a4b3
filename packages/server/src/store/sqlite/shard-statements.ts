/**
 * The SQLite lease-shard statements (several coordinators, DESIGN.md §6): one named statement per
 * step, prepared once per connection. Times are the store clock's epoch milliseconds.
 */

export const SHARD_SQL = {
  /** Every shard lease, in shard order. No params. */
  selectShardLeases: 'SELECT shard, owner_id, epoch, expires_at FROM shard_leases ORDER BY shard',

  /** Renew every shard @ownerId holds until @expiresAt. Params: @ownerId, @expiresAt. */
  renewShardLeases: 'UPDATE shard_leases SET expires_at = @expiresAt WHERE owner_id = @ownerId',

  /** Take a shard nobody ever held (epoch 1). Params: @shard, @ownerId, @expiresAt. */
  insertShardLease: `
    INSERT INTO shard_leases (shard, owner_id, epoch, expires_at) VALUES (@shard, @ownerId, 1, @expiresAt)`,

  /**
   * Take an expired shard from its last owner: epoch + 1, conditional on it still being expired.
   * Params: @shard, @ownerId, @expiresAt, @now.
   */
  takeShardLease: `
    UPDATE shard_leases SET owner_id = @ownerId, epoch = epoch + 1, expires_at = @expiresAt
    WHERE shard = @shard AND expires_at <= @now AND owner_id <> @ownerId`,

  /** Give up every shard @ownerId holds (it expires now). Params: @ownerId, @now. */
  releaseShardLeases:
    'UPDATE shard_leases SET expires_at = @now WHERE owner_id = @ownerId AND expires_at > @now',
} as const;
