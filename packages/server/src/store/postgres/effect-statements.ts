/** The PostgreSQL effect-key statements (see `effect-store.ts`). `$1` is the store clock's now or null. */
import { CLOCK_CTE } from './sql-fragments.js';

const EFFECT_COLUMNS = 'state, claim_id, claim_expires_at, result, done_at, expires_at';

export const EFFECT_SQL = {
  /** One key of a task, and whether its time is still running. Params: $1 now, $2 task id, $3 key. */
  selectEffect: `
    WITH ${CLOCK_CTE}
    SELECT ${EFFECT_COLUMNS}, expires_at > clock.now AS live FROM task_effects, clock
    WHERE task_id = $2 AND effect_key = $3`,

  /**
   * Take the key for a claim: a new row, or one whose claim lapsed or whose time is up; returns the
   * row when taken. Params: $1 now, $2 task id, $3 key, $4 claim id, $5 agent id, $6 claim ttl,
   * $7 ttl.
   */
  claimEffect: `
    WITH ${CLOCK_CTE}
    INSERT INTO task_effects AS e (task_id, effect_key, state, claim_id, agent_id, claim_expires_at, created_at,
                                   expires_at)
    SELECT $2, $3, 'running', $4, $5, clock.now + $6::bigint, clock.now, clock.now + $7::bigint FROM clock
    ON CONFLICT (task_id, effect_key) DO UPDATE SET state = 'running', claim_id = excluded.claim_id,
      agent_id = excluded.agent_id, claim_expires_at = excluded.claim_expires_at, result = NULL,
      done_at = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
    WHERE e.expires_at <= excluded.created_at
       OR (e.state = 'running' AND e.claim_expires_at <= excluded.created_at)
    RETURNING ${EFFECT_COLUMNS}`,

  /**
   * Record the result under the claim that holds the key; returns the row when recorded.
   * Params: $1 now, $2 task id, $3 key, $4 claim id, $5 result (jsonb), $6 ttl.
   */
  recordEffect: `
    WITH ${CLOCK_CTE}
    UPDATE task_effects SET state = 'done', result = $5::jsonb, done_at = clock.now,
      expires_at = clock.now + $6::bigint
    FROM clock
    WHERE task_id = $2 AND effect_key = $3 AND state = 'running' AND claim_id = $4 AND expires_at > clock.now
    RETURNING ${EFFECT_COLUMNS}`,

  /** Params: $1 task id, $2 key, $3 claim id. */
  releaseEffect: `
    DELETE FROM task_effects WHERE task_id = $1 AND effect_key = $2 AND state = 'running' AND claim_id = $3`,

  /** Params: $1 now, $2 limit. */
  deleteExpiredEffects: `
    WITH ${CLOCK_CTE}
    DELETE FROM task_effects WHERE (task_id, effect_key) IN (
      SELECT task_id, effect_key FROM task_effects, clock WHERE expires_at <= clock.now
      ORDER BY expires_at LIMIT $2)`,
} as const;
