/**
 * The SQLite agent statements: one named, parameterised statement per store operation, prepared once
 * per connection. JSON travels as text.
 */
import { DEPENDENCY_COLUMNS } from '../dependency-row.js';

export const AGENT_COLUMNS = `id, agent_type, name, host, pid, task_types, labels, status, registered_at,
  last_heartbeat_at, last_poll_at, last_poll_types, metrics`;

export const AGENT_SQL = {
  /** Register an agent as `idle`. Params: the NewAgent fields and @registeredAt. */
  insertAgent: `
    INSERT INTO agents (id, agent_type, name, host, pid, task_types, labels, token_hash, status, registered_at)
    VALUES (@id, @agentType, @name, @host, @pid, @taskTypes, @labels, @tokenHash, 'idle', @registeredAt)
    RETURNING ${AGENT_COLUMNS}`,

  /** One agent by id. Params: @id. */
  selectAgent: `SELECT ${AGENT_COLUMNS} FROM agents WHERE id = @id`,

  /** The agent a token belongs to, unless it left. Params: @tokenHash. */
  selectAgentByTokenHash: `SELECT ${AGENT_COLUMNS} FROM agents WHERE token_hash = @tokenHash AND status <> 'left'`,

  /**
   * Agents in registration order. Params: @taskType (null = any), @statuses (JSON array or null = any).
   */
  listAgents: `
    SELECT ${AGENT_COLUMNS} FROM agents
    WHERE (@taskType IS NULL OR EXISTS (SELECT 1 FROM json_each(agents.task_types) WHERE value = @taskType))
      AND (@statuses IS NULL OR status IN (SELECT value FROM json_each(@statuses)))
    ORDER BY seq`,

  /** Ids of the tasks one agent holds. Params: @agentId. */
  selectHeldTaskIds: `
    SELECT id FROM tasks WHERE agent_id = @agentId AND lease_expires_at IS NOT NULL ORDER BY seq`,

  /** (agent, task) for every held task. No params. */
  selectAllHeldTaskIds: 'SELECT agent_id, id FROM tasks WHERE lease_expires_at IS NOT NULL ORDER BY seq',

  /**
   * An agent-level heartbeat; status and metrics only when given (not null).
   * Params: @id, @now, @status, @metrics (JSON).
   */
  recordAgentHeartbeat: `
    UPDATE agents SET last_heartbeat_at = @now, status = COALESCE(@status, status),
      metrics = COALESCE(@metrics, metrics)
    WHERE id = @id`,

  /** The agent asked for work. Params: @id, @now, @types (JSON array). */
  recordPoll: 'UPDATE agents SET last_poll_at = @now, last_poll_types = @types WHERE id = @id',

  /** Params: @id, @status. */
  setAgentStatus: 'UPDATE agents SET status = @status WHERE id = @id',

  /**
   * Queue a command, unless the same one about the same task is still waiting.
   * Params: @agentId, @type, @taskId (null = none), @command (JSON), @now.
   */
  insertAgentCommand: `
    INSERT INTO agent_commands (agent_id, type, task_id, command, created_at)
    VALUES (@agentId, @type, @taskId, @command, @now)
    ON CONFLICT (agent_id, type, task_id) WHERE task_id IS NOT NULL DO NOTHING`,

  /**
   * Keep the agent's newest @keep commands, and drop every agent's commands older than @maxAgeMs.
   * Params: @agentId, @keep (>= 1), @now, @maxAgeMs.
   */
  trimAgentCommands: `
    DELETE FROM agent_commands
    WHERE (agent_id = @agentId AND seq < (SELECT seq FROM agent_commands WHERE agent_id = @agentId
                                          ORDER BY seq DESC LIMIT 1 OFFSET @keep - 1))
       OR created_at < @now - @maxAgeMs`,

  /** The agent's commands, oldest first. Params: @agentId. */
  selectAgentCommands: 'SELECT command FROM agent_commands WHERE agent_id = @agentId ORDER BY seq',

  /** Params: @agentId. */
  clearAgentCommands: 'DELETE FROM agent_commands WHERE agent_id = @agentId',

  /**
   * Save a dependency's state, one version above the last.
   * Params: @name, @state, @until, @since, @reportedBy, @message.
   */
  saveDependency: `
    INSERT INTO dependencies (name, state, until, since, reported_by, message, version)
    VALUES (@name, @state, @until, @since, @reportedBy, @message, 1)
    ON CONFLICT (name) DO UPDATE SET state = excluded.state, until = excluded.until, since = excluded.since,
      reported_by = excluded.reported_by, message = excluded.message, version = dependencies.version + 1
    RETURNING ${DEPENDENCY_COLUMNS}`,

  listDependencies: `SELECT ${DEPENDENCY_COLUMNS} FROM dependencies ORDER BY name`,
} as const;
