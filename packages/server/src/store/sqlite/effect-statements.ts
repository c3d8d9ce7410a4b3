/** The SQLite effect-key statements (see `effect-store.ts`), prepared once per connection. */
const EFFECT_COLUMNS = 'state, claim_id, claim_expires_at, result, done_at, expires_at';

export const EFFECT_SQL = {
  /** One key of a task. Params: @taskId, @key. */
  selectEffect: `SELECT ${EFFECT_COLUMNS} FROM task_effects WHERE task_id = @taskId AND effect_key = @key`,

  /**
   * Take the key for a claim: a new row, or one whose claim lapsed or whose time is up. Params: @taskId,
   * @key, @claimId, @agentId, @now, @claimExpiresAt, @expiresAt.
   */
  claimEffect: `
    INSERT INTO task_effects (task_id, effect_key, state, claim_id, agent_id, claim_expires_at, created_at,
                              expires_at)
    VALUES (@taskId, @key, 'running', @claimId, @agentId, @claimExpiresAt, @now, @expiresAt)
    ON CONFLICT (task_id, effect_key) DO UPDATE SET state = 'running', claim_id = excluded.claim_id,
      agent_id = excluded.agent_id, claim_expires_at = excluded.claim_expires_at, result = NULL,
      done_at = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
    WHERE task_effects.expires_at <= @now
       OR (task_effects.state = 'running' AND task_effects.claim_expires_at <= @now)`,

  /** Record the result under the claim that holds the key. Params: @taskId, @key, @claimId, @result, @now, @expiresAt. */
  recordEffect: `
    UPDATE task_effects SET state = 'done', result = @result, done_at = @now, expires_at = @expiresAt
    WHERE task_id = @taskId AND effect_key = @key AND state = 'running' AND claim_id = @claimId
      AND expires_at > @now`,

  /** Params: @taskId, @key, @claimId. */
  releaseEffect: `
    DELETE FROM task_effects
    WHERE task_id = @taskId AND effect_key = @key AND state = 'running' AND claim_id = @claimId`,

  /** Params: @now, @limit. */
  deleteExpiredEffects: `
    DELETE FROM task_effects WHERE rowid IN (
      SELECT rowid FROM task_effects WHERE expires_at <= @now ORDER BY expires_at LIMIT @limit)`,
} as const;
