/**
 * The SQLite lease-shard and coordinator-presence statements (several coordinators, docs/design.md §6):
 * one named statement per step, prepared once per connection. Times are the store clock's epoch
 * milliseconds.
 */

export const SHARD_SQL = {
  /** Every shard lease, in shard order. No params. */
  selectShardLeases: 'SELECT shard, owner_id, epoch, expires_at FROM shard_leases ORDER BY shard',

  /**
   * Renew every unexpired shard @ownerId holds until @expiresAt (a released or lapsed one is taken
   * again through `takeShardLease`, with a new epoch). Params: @ownerId, @expiresAt, @now.
   */
  renewShardLeases:
    'UPDATE shard_leases SET expires_at = @expiresAt WHERE owner_id = @ownerId AND expires_at > @now',

  /** Take a shard nobody ever held (epoch 1). Params: @shard, @ownerId, @expiresAt. */
  insertShardLease: `
    INSERT INTO shard_leases (shard, owner_id, epoch, expires_at) VALUES (@shard, @ownerId, 1, @expiresAt)`,

  /**
   * Take an expired (released or lapsed) shard: epoch + 1, conditional on it still being expired.
   * Params: @shard, @ownerId, @expiresAt, @now.
   */
  takeShardLease: `
    UPDATE shard_leases SET owner_id = @ownerId, epoch = epoch + 1, expires_at = @expiresAt
    WHERE shard = @shard AND expires_at <= @now`,

  /** Give up every shard @ownerId holds (it expires now). Params: @ownerId, @now. */
  releaseShardLeases:
    'UPDATE shard_leases SET expires_at = @now WHERE owner_id = @ownerId AND expires_at > @now',

  /** Give up shard @shard if @ownerId holds it (it expires now). Params: @shard, @ownerId, @now. */
  releaseShardLease: `
    UPDATE shard_leases SET expires_at = @now WHERE shard = @shard AND owner_id = @ownerId AND expires_at > @now`,

  /** Record @id live until @expiresAt. Params: @id, @now, @expiresAt. */
  upsertCoordinator: `
    INSERT INTO coordinators (id, last_seen_at, expires_at, listening, instance, tokens)
    VALUES (@id, @now, @expiresAt, @listening, @instance, @tokens)
    ON CONFLICT (id) DO UPDATE SET last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at,
      listening = excluded.listening, instance = excluded.instance, tokens = excluded.tokens`,

  /** Who wrote @id's presence, and until when it is live. Params: @id. */
  selectCoordinatorInstance: 'SELECT instance, expires_at FROM coordinators WHERE id = @id',

  /** Forget coordinators whose presence expired. Params: @now. */
  deleteExpiredCoordinators: 'DELETE FROM coordinators WHERE expires_at <= @now',

  /** Withdraw @id's presence (graceful stop). Params: @id. */
  deleteCoordinator: 'DELETE FROM coordinators WHERE id = @id',

  /** Live coordinators, by id. Params: @now. */
  selectLiveCoordinators: `
    SELECT id, last_seen_at, expires_at, listening, tokens FROM coordinators WHERE expires_at > @now ORDER BY id`,
} as const;
