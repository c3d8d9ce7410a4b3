/** The PostgreSQL intervention statements (see `intervention-store.ts`). `$1` is the store clock's now or null. */
import { INTERVENTION_COLUMNS } from '../intervention-row.js';
import { CLOCK_CTE } from './sql-fragments.js';

export const INTERVENTION_SQL = {
  /**
   * A new intervention, unless one is open for the agent, condition and task. Params: $1 now, $2 id,
   * $3 agent id, $4 incarnation, $5 task id ('' = none), $6 condition, $7 action, $8 rung, $9 attempt,
   * $10 state, $11 reason, $12 evidence (jsonb), $13 actor, $14 coordinator id, $15 shard epoch, $16 command id.
   */
  openIntervention: `
    WITH ${CLOCK_CTE}
    INSERT INTO interventions (id, agent_id, incarnation, task_id, condition, action, rung, attempt, state, reason,
                               evidence, actor, command_id, coordinator_id, shard_epoch, started_at)
    SELECT $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $16, $14, $15, clock.now FROM clock
    ON CONFLICT (agent_id, condition, task_id) WHERE state IN ('pending', 'held') DO NOTHING
    RETURNING ${INTERVENTION_COLUMNS}`,

  /** End an open one. Params: $1 now, $2 id, $3 state, $4 reason, $5 evidence to merge (jsonb). */
  endIntervention: `
    WITH ${CLOCK_CTE}
    UPDATE interventions SET state = $3, reason = $4, evidence = evidence || $5::jsonb, ended_at = clock.now
    FROM clock
    WHERE id = $2 AND state IN ('pending', 'held')
    RETURNING ${INTERVENTION_COLUMNS}`,

  /** Params: $1 id, $2 state ('pending' | 'held'). */
  holdIntervention: `
    UPDATE interventions SET state = $2 WHERE id = $1 AND state IN ('pending', 'held')
    RETURNING ${INTERVENTION_COLUMNS}`,

  /** Merge into an open one's evidence (top-level keys) and set its command. Params: $1 id, $2 evidence (jsonb), $3 command id or null. */
  noteIntervention: `
    UPDATE interventions SET evidence = evidence || $2::jsonb, command_id = coalesce($3, command_id)
    WHERE id = $1 AND state IN ('pending', 'held')
    RETURNING ${INTERVENTION_COLUMNS}`,

  /** Params: $1 id. */
  selectIntervention: `SELECT ${INTERVENTION_COLUMNS} FROM interventions WHERE id = $1`,

  /**
   * Newest first, before $1 (seq), at most $2. Filters (null = any): $3 agent id, $4 task id,
   * $5 states (text[]), $6 command id.
   */
  listInterventions: `
    SELECT ${INTERVENTION_COLUMNS} FROM interventions
    WHERE seq < $1
      AND ($3::text IS NULL OR agent_id = $3)
      AND ($4::text IS NULL OR task_id = $4)
      AND ($6::text IS NULL OR command_id = $6)
      AND ($5::text[] IS NULL OR state = ANY ($5::text[]))
    ORDER BY seq DESC LIMIT $2`,
} as const;
