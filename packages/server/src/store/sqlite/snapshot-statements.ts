/** The SQLite agent-snapshot statements (see `snapshot-store.ts`), prepared once per connection. */
const HEAD_COLUMNS =
  'agent_id, version, base_ref, base_bytes, delta_count, deltas_bytes, ttl_ms, updated_at, expires_at';

export const SNAPSHOT_SQL = {
  /** The live snapshot of an agent, whole. Params: @agentId, @now. */
  selectSnapshot: `
    SELECT ${HEAD_COLUMNS}, base, deltas FROM agent_snapshots WHERE agent_id = @agentId AND expires_at > @now`,

  /** The head of an agent's snapshot, live or not. Params: @agentId. */
  selectHead: `SELECT ${HEAD_COLUMNS} FROM agent_snapshots WHERE agent_id = @agentId`,

  /**
   * A new base, replacing whatever was there (live or expired) and its deltas. Params: @agentId, @base,
   * @baseRef, @baseBytes, @ttlMs, @now, @expiresAt.
   */
  putSnapshot: `
    INSERT INTO agent_snapshots (agent_id, version, base, base_ref, base_bytes, deltas, delta_count, deltas_bytes,
                                 ttl_ms, updated_at, expires_at)
    VALUES (@agentId, 1, @base, @baseRef, @baseBytes, '[]', 0, 0, @ttlMs, @now, @expiresAt)
    ON CONFLICT (agent_id) DO UPDATE SET version = agent_snapshots.version + 1, base = excluded.base,
      base_ref = excluded.base_ref, base_bytes = excluded.base_bytes, deltas = '[]', delta_count = 0,
      deltas_bytes = 0, ttl_ms = excluded.ttl_ms, updated_at = excluded.updated_at,
      expires_at = excluded.expires_at
    RETURNING ${HEAD_COLUMNS}`,

  /**
   * The compaction: a new base, only while the snapshot is live and at @expectedVersion. Params:
   * @agentId, @expectedVersion, @base, @baseRef, @baseBytes, @ttlMs, @now, @expiresAt.
   */
  compactSnapshot: `
    UPDATE agent_snapshots SET version = version + 1, base = @base, base_ref = @baseRef, base_bytes = @baseBytes,
      deltas = '[]', delta_count = 0, deltas_bytes = 0, ttl_ms = @ttlMs, updated_at = @now,
      expires_at = @expiresAt
    WHERE agent_id = @agentId AND version = @expectedVersion AND expires_at > @now
    RETURNING ${HEAD_COLUMNS}`,

  /**
   * Append a delta to the live snapshot while it has room. Params: @agentId, @patch (JSON text),
   * @patchBytes, @ttlMs (null: keep), @now, @maxDeltas, @maxDeltasBytes.
   */
  appendDelta: `
    UPDATE agent_snapshots SET version = version + 1, deltas = json_insert(deltas, '$[#]', json(@patch)),
      delta_count = delta_count + 1, deltas_bytes = deltas_bytes + @patchBytes,
      ttl_ms = COALESCE(@ttlMs, ttl_ms), updated_at = @now, expires_at = @now + COALESCE(@ttlMs, ttl_ms)
    WHERE agent_id = @agentId AND expires_at > @now AND delta_count < @maxDeltas
      AND deltas_bytes + @patchBytes <= @maxDeltasBytes
    RETURNING ${HEAD_COLUMNS}`,

  /** Up to @limit expired snapshots, oldest first. Params: @now, @limit. */
  selectExpired: `
    SELECT agent_id, base_ref FROM agent_snapshots WHERE expires_at <= @now ORDER BY expires_at LIMIT @limit`,

  /** Params: @agentId, @now. */
  deleteExpired: 'DELETE FROM agent_snapshots WHERE agent_id = @agentId AND expires_at <= @now',
} as const;
