/**
 * The SQLite agent and watchdog statements: one named, parameterised statement per store operation,
 * prepared once per connection. JSON travels as text.
 */
import { AGENT_COLUMNS, CONDITION_COLUMNS } from '../agent-row.js';
import { derivedStatusSql } from '../agent-status-sql.js';
import { DEPENDENCY_COLUMNS } from '../dependency-row.js';

const FROM_AGENTS = `SELECT ${AGENT_COLUMNS} FROM agents a`;

export const AGENT_SQL = {
  /**
   * A new slot, active, idle, with its first lease. Params: the NewAgent fields (JSON as text), @shard,
   * @now, @leaseExpiresAt.
   */
  insertAgent: `
    INSERT INTO agents (id, agent_key, agent_type, name, host, pid, task_types, labels, requires, supervisor_id,
                        token_hash, policy, shard, registered_at, started_at, reported_status_since,
                        lease_expires_at, heartbeat_interval_ms, heartbeat_timeout_ms)
    VALUES (@id, @key, @agentType, @name, @host, @pid, @taskTypes, @labels, @requires, @supervisorId,
            @tokenHash, @policy, @shard, @now, @now, @now, @leaseExpiresAt, @heartbeatIntervalMs, @startupTimeoutMs)`,

  /** The slot a key names for an agent type. Params: @agentType, @key. */
  selectAgentByKey: `
    SELECT id, incarnation, lifecycle, lease_expires_at AS leaseExpiresAt FROM agents
    WHERE agent_type = @agentType AND agent_key = @key`,

  /**
   * The slot's next incarnation: new token and process facts, active and idle again, per-incarnation
   * state reset, a first lease. Params: as insertAgent (@id is the slot's).
   */
  reincarnateAgent: `
    UPDATE agents SET incarnation = incarnation + 1, name = @name, host = @host, pid = @pid,
      task_types = @taskTypes, labels = @labels, requires = @requires, supervisor_id = @supervisorId,
      token_hash = @tokenHash, policy = @policy, started_at = @now, lifecycle = 'active', ended_at = NULL,
      reported_status = 'idle', reported_status_since = @now, status_message = NULL,
      last_heartbeat_at = NULL, lease_expires_at = @leaseExpiresAt, heartbeat_interval_ms = @heartbeatIntervalMs,
      heartbeat_timeout_ms = @startupTimeoutMs, metrics = NULL, metadata = NULL, progress = NULL, phase = NULL,
      progress_changed_at = NULL, samples = NULL, gaps = '[]'
    WHERE id = @id
    RETURNING incarnation - 1 AS replaced`,

  /** One agent by id. Params: @id. */
  selectAgent: `${FROM_AGENTS} WHERE a.id = @id`,

  /** Who an agent token belongs to, if active. Params: @tokenHash. */
  selectTokenOwner: `
    SELECT id AS agentId, incarnation, agent_type AS agentType FROM agents
    WHERE token_hash = @tokenHash AND lifecycle = 'active'`,

  /**
   * A page of agents in registration order: those after @afterSeq, at most @limit. Filters (null =
   * any): @taskType (registered for it or last polled for it), @agentType, @statuses (JSON array of
   * derived statuses).
   */
  listAgents: `
    SELECT ${AGENT_COLUMNS}, a.seq AS seq FROM agents a
    WHERE a.seq > @afterSeq
      AND (@taskType IS NULL OR EXISTS (SELECT 1 FROM json_each(a.task_types) WHERE value = @taskType)
           OR EXISTS (SELECT 1 FROM json_each(a.last_poll_types) WHERE value = @taskType))
      AND (@agentType IS NULL OR a.agent_type = @agentType)
      AND (@statuses IS NULL OR ${derivedStatusSql('a', 'a.open_conditions')} IN (SELECT value FROM json_each(@statuses)))
    ORDER BY a.seq LIMIT @limit`,

  /** (agent, task) for every task the agents @ids (JSON array) hold, oldest first. */
  selectHeldTaskIdsOf: `
    SELECT agent_id, id FROM tasks
    WHERE agent_id IN (SELECT value FROM json_each(@ids)) AND lease_expires_at IS NOT NULL ORDER BY seq`,

  /** Ids of the tasks one agent holds. Params: @agentId. */
  selectHeldTaskIds: `
    SELECT id FROM tasks WHERE agent_id = @agentId AND lease_expires_at IS NOT NULL ORDER BY seq`,

  /**
   * What a heartbeat reads, if the agent is active in that incarnation: the columns it computes from
   * and the watch needs (metrics only when @withMetrics: a beat that carries them does not read the
   * stored ones), the tasks it holds (JSON array, oldest first) and whether commands wait for it.
   * Params: @id, @incarnation, @withMetrics.
   */
  selectBeatingAgent: `
    SELECT a.id, a.incarnation, a.agent_type, a.policy, a.lifecycle, a.started_at, a.last_heartbeat_at,
      a.lease_expires_at, a.heartbeat_interval_ms, a.reported_status, a.reported_status_since,
      a.status_message, CASE WHEN @withMetrics THEN a.metrics END AS metrics, a.requires, a.progress,
      a.phase, a.progress_changed_at, a.open_conditions, a.samples, a.gaps,
      (SELECT json_group_array(t.id ORDER BY t.seq) FROM tasks t
        WHERE t.agent_id = a.id AND t.lease_expires_at IS NOT NULL) AS held_task_ids,
      EXISTS (SELECT 1 FROM agent_commands c WHERE c.agent_id = a.id) AS has_commands
    FROM agents a WHERE a.id = @id AND a.incarnation = @incarnation AND a.lifecycle = 'active'`,

  /** What a heartbeat sets (see agent-heartbeat-rules.ts). Params: those columns, JSON as text, @id. */
  recordAgentHeartbeat: `
    UPDATE agents SET last_heartbeat_at = @lastHeartbeatAt, lease_expires_at = @leaseExpiresAt,
      heartbeat_interval_ms = @heartbeatIntervalMs, heartbeat_timeout_ms = @heartbeatTimeoutMs,
      reported_status = @reportedStatus, reported_status_since = @reportedStatusSince,
      status_message = @statusMessage, metrics = COALESCE(@metrics, metrics),
      metadata = COALESCE(@metadata, metadata), progress = @progress,
      phase = @phase, progress_changed_at = @progressChangedAt, samples = @samples, gaps = @gaps
    WHERE id = @id`,

  /** The agent asked for work. Params: @id, @now, @types (JSON array). */
  recordPoll: 'UPDATE agents SET last_poll_at = @now, last_poll_types = @types WHERE id = @id',

  /** The agent left or was ended. Params: @id, @lifecycle, @now. */
  endAgent: `
    UPDATE agents SET lifecycle = @lifecycle, ended_at = @now, lease_expires_at = NULL
    WHERE id = @id AND lifecycle = 'active'`,

  /** Params: @id. */
  agentExists: 'SELECT 1 AS found FROM agents WHERE id = @id',

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
} as const;

export const WATCHDOG_SQL = {
  /**
   * Open a condition unless it is open already (same agent, kind, task). Params: @agentId,
   * @incarnation, @agentType, @condition, @taskId ('' = none), @since, @evidence (JSON), @openedBy, @now.
   */
  openCondition: `
    INSERT INTO agent_conditions (agent_id, incarnation, agent_type, condition, task_id, since, evidence,
                                  opened_by, opened_at)
    VALUES (@agentId, @incarnation, @agentType, @condition, @taskId, @since, @evidence, @openedBy, @now)
    ON CONFLICT (agent_id, condition, task_id) WHERE closed_at IS NULL DO NOTHING
    RETURNING ${CONDITION_COLUMNS.replaceAll('c.', '')}`,

  /** Close an open condition. Params: @agentId, @condition, @taskId ('' = none), @reason, @now. */
  closeCondition: `
    UPDATE agent_conditions SET closed_at = @now, close_reason = @reason
    WHERE agent_id = @agentId AND condition = @condition AND task_id = @taskId AND closed_at IS NULL
    RETURNING ${CONDITION_COLUMNS.replaceAll('c.', '')}`,

  /** Close every open condition of an agent. Params: @agentId, @reason, @now. */
  closeAllConditions: `
    UPDATE agent_conditions SET closed_at = @now, close_reason = @reason
    WHERE agent_id = @agentId AND closed_at IS NULL
    RETURNING ${CONDITION_COLUMNS.replaceAll('c.', '')}`,

  /** The agent's open-condition list, from its open conditions in opening order. Params: @agentId. */
  refreshOpenConditions: `
    UPDATE agents SET open_conditions = (
      SELECT json_group_array(token) FROM (
        SELECT condition || CASE WHEN task_id = '' THEN '' ELSE ' ' || task_id END AS token
        FROM agent_conditions WHERE agent_id = @agentId AND closed_at IS NULL ORDER BY seq))
    WHERE id = @agentId`,

  /** The agent's type, if it is active in @incarnation. Params: @agentId, @incarnation. */
  activeAgentType: `
    SELECT agent_type FROM agents WHERE id = @agentId AND incarnation = @incarnation AND lifecycle = 'active'`,

  /** Conditions newest first. Params: @agentId (null = all), @open (null = any, 1 open, 0 closed), @limit. */
  listConditions: `
    SELECT ${CONDITION_COLUMNS} FROM agent_conditions c
    WHERE (@agentId IS NULL OR c.agent_id = @agentId)
      AND (@open IS NULL OR (@open = 1 AND c.closed_at IS NULL) OR (@open = 0 AND c.closed_at IS NOT NULL))
    ORDER BY c.seq DESC LIMIT @limit`,

  /** The open conditions of the agents @ids (JSON array), oldest first (the agent list attaches them). */
  listOpenConditionsOf: `
    SELECT ${CONDITION_COLUMNS} FROM agent_conditions c
    WHERE c.agent_id IN (SELECT value FROM json_each(@ids)) AND c.closed_at IS NULL ORDER BY c.seq`,

  /** One agent's open conditions, oldest first. Params: @agentId. */
  agentOpenConditions: `
    SELECT ${CONDITION_COLUMNS} FROM agent_conditions c WHERE c.agent_id = @agentId AND c.closed_at IS NULL
    ORDER BY c.seq`,

  /** One condition by seq. Params: @seq. */
  selectCondition: `SELECT ${CONDITION_COLUMNS} FROM agent_conditions c WHERE c.seq = @seq`,

  /** Keep an agent's newest @keep closed conditions. Params: @agentId, @keep. */
  trimClosedConditions: `
    DELETE FROM agent_conditions WHERE agent_id = @agentId AND closed_at IS NOT NULL AND seq < (
      SELECT seq FROM agent_conditions WHERE agent_id = @agentId AND closed_at IS NOT NULL
      ORDER BY seq DESC LIMIT 1 OFFSET @keep - 1)`,

  /**
   * Active agents whose lease ends by @dueBy in the shards @shards (JSON array). Params: @dueBy, @shards.
   */
  dueAgentLeases: `
    SELECT id, incarnation, lease_expires_at, last_heartbeat_at, started_at, heartbeat_interval_ms,
           heartbeat_timeout_ms
    FROM agents
    WHERE shard IN (SELECT value FROM json_each(@shards)) AND lease_expires_at IS NOT NULL
      AND lease_expires_at <= @dueBy
    ORDER BY lease_expires_at`,

  /**
   * The agent is lost: no lease any more. Only when its lease has passed (@now).
   * Params: @id, @incarnation, @now.
   */
  loseAgent: `
    UPDATE agents SET lease_expires_at = NULL
    WHERE id = @id AND incarnation = @incarnation AND lifecycle = 'active' AND lease_expires_at IS NOT NULL
      AND lease_expires_at <= @now
    RETURNING agent_type`,

  /** Save one coordinator's baseline. Params: @agentType, @metric, @coordinatorId, @histogram (JSON), @now. */
  saveBaseline: `
    INSERT INTO agent_type_baselines (agent_type, metric, coordinator_id, histogram, updated_at)
    VALUES (@agentType, @metric, @coordinatorId, @histogram, @now)
    ON CONFLICT (agent_type, metric, coordinator_id) DO UPDATE SET histogram = excluded.histogram,
      updated_at = excluded.updated_at`,

  listBaselines: `
    SELECT agent_type, metric, coordinator_id, histogram, updated_at FROM agent_type_baselines
    ORDER BY agent_type, metric, coordinator_id`,

  /** Agents grouped by what decides their derived status. */
  agentStatusCounts: `
    SELECT lifecycle, reported_status, open_conditions, count(*) AS count FROM agents
    GROUP BY lifecycle, reported_status, open_conditions`,

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
