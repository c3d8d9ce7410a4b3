/** The SQLite intervention statements (see `intervention-store.ts`), prepared once per connection. */
import { INTERVENTION_COLUMNS } from '../intervention-row.js';

export const INTERVENTION_SQL = {
  /**
   * A new intervention, unless one is open for the agent, condition and task. Params: the row's
   * columns as @camelCase (evidence as JSON text, @taskId '' for none), @state, @now.
   */
  openIntervention: `
    INSERT INTO interventions (id, agent_id, incarnation, task_id, condition, action, rung, attempt, state, reason,
                               evidence, actor, command_id, coordinator_id, shard_epoch, started_at)
    VALUES (@id, @agentId, @incarnation, @taskId, @condition, @action, @rung, @attempt, @state, @reason, @evidence,
            @actor, @commandId, @coordinatorId, @shardEpoch, @now)
    ON CONFLICT (agent_id, condition, task_id) WHERE state IN ('pending', 'held') DO NOTHING
    RETURNING ${INTERVENTION_COLUMNS}`,

  /** End an open one. Params: @id, @state, @reason, @evidence (JSON object to merge, text), @now. */
  endIntervention: `
    UPDATE interventions SET state = @state, reason = @reason, evidence = json_patch(evidence, @evidence),
      ended_at = @now
    WHERE id = @id AND state IN ('pending', 'held')
    RETURNING ${INTERVENTION_COLUMNS}`,

  /** Params: @id, @state ('pending' | 'held'). */
  holdIntervention: `
    UPDATE interventions SET state = @state WHERE id = @id AND state IN ('pending', 'held')
    RETURNING ${INTERVENTION_COLUMNS}`,

  /**
   * Set an open one's evidence (merged by the caller, in the same write) and, when not null, its
   * command. Params: @id, @evidence (text), @commandId.
   */
  noteIntervention: `
    UPDATE interventions SET evidence = @evidence, command_id = coalesce(@commandId, command_id)
    WHERE id = @id AND state IN ('pending', 'held')
    RETURNING ${INTERVENTION_COLUMNS}`,

  /** Params: @id. */
  selectIntervention: `SELECT ${INTERVENTION_COLUMNS} FROM interventions WHERE id = @id`,

  /**
   * Newest first, before @beforeSeq, at most @limit. Filters (null = any): @agentId, @taskId,
   * @commandId, @states (JSON array).
   */
  listInterventions: `
    SELECT ${INTERVENTION_COLUMNS} FROM interventions
    WHERE seq < @beforeSeq
      AND (@agentId IS NULL OR agent_id = @agentId)
      AND (@taskId IS NULL OR task_id = @taskId)
      AND (@commandId IS NULL OR command_id = @commandId)
      AND (@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
    ORDER BY seq DESC LIMIT @limit`,
} as const;
