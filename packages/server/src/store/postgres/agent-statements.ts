/**
 * The PostgreSQL agent statements (lease shards: `shard-statements.ts`): one named, parameterised
 * statement per store operation. JSON travels as text cast to jsonb; `$1` of timed statements is the store clock.
 */
import { DEPENDENCY_COLUMNS } from '../dependency-row.js';
import { CLOCK_CTE } from './sql-fragments.js';

const AGENT_COLUMNS = `a.id, a.agent_type, a.name, a.host, a.pid, a.task_types, a.labels, a.status, a.registered_at,
  a.last_heartbeat_at, a.last_poll_at, a.last_poll_types, a.metrics`;

/** The ids of the tasks agent `a` holds, oldest first (uses the tasks_held index). */
const CURRENT_TASK_IDS = `ARRAY(SELECT t.id FROM tasks t WHERE t.agent_id = a.id AND t.lease_expires_at IS NOT NULL
  ORDER BY t.seq) AS current_task_ids`;

export const AGENT_SQL = {
  /**
   * Register an agent as `idle`. Params: $1 now, $2 id, $3 agentType, $4 name, $5 host, $6 pid,
   * $7 taskTypes (jsonb), $8 labels (jsonb), $9 tokenHash.
   */
  insertAgent: `
    WITH ${CLOCK_CTE}
    INSERT INTO agents AS a (id, agent_type, name, host, pid, task_types, labels, token_hash, status, registered_at)
    SELECT $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, 'idle', clock.now FROM clock
    RETURNING ${AGENT_COLUMNS}`,

  /** One agent by id, with the tasks it holds. Params: $1 id. */
  selectAgent: `SELECT ${AGENT_COLUMNS}, ${CURRENT_TASK_IDS} FROM agents a WHERE a.id = $1`,

  /** The agent a token belongs to, unless it left. Params: $1 tokenHash. */
  selectAgentByTokenHash: `
    SELECT ${AGENT_COLUMNS}, ${CURRENT_TASK_IDS} FROM agents a WHERE a.token_hash = $1 AND a.status <> 'left'`,

  /** Agents in registration order. Params: $1 taskType (null = any), $2 statuses (text[], null = any). */
  listAgents: `
    SELECT ${AGENT_COLUMNS}, ${CURRENT_TASK_IDS} FROM agents a
    WHERE ($1::text IS NULL OR a.task_types ? $1::text) AND ($2::text[] IS NULL OR a.status = ANY($2::text[]))
    ORDER BY a.seq`,

  /**
   * Agent-level heartbeats: each agent's heartbeat time, status and metrics (each only when given),
   * and its queued commands taken. One row per agent found (seq and command null), then one per
   * command taken. Params: $1 now, $2 jsonb array of {id, status, metrics} (one entry per agent).
   */
  recordAgentHeartbeats: `
    WITH ${CLOCK_CTE},
    input AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS i(id text, status text, metrics jsonb)),
    beat AS (
      UPDATE agents a SET last_heartbeat_at = clock.now, status = COALESCE(i.status, a.status),
        metrics = COALESCE(i.metrics, a.metrics)
      FROM input i, clock WHERE a.id = i.id
      RETURNING a.id
    ),
    taken AS (
      DELETE FROM agent_commands c USING beat b WHERE c.agent_id = b.id
      RETURNING c.agent_id, c.seq, c.command
    )
    SELECT id AS agent_id, NULL::bigint AS seq, NULL::jsonb AS command FROM beat
    UNION ALL
    SELECT agent_id, seq, command FROM taken`,

  /** The agent asked for work. Params: $1 now, $2 id, $3 types (jsonb). */
  recordPoll: `
    WITH ${CLOCK_CTE}
    UPDATE agents SET last_poll_at = clock.now, last_poll_types = $3::jsonb FROM clock WHERE id = $2`,

  /** Params: $1 id, $2 status. */
  setAgentStatus: 'UPDATE agents SET status = $2 WHERE id = $1',

  /**
   * Queue a command, unless the same one about the same task is still waiting.
   * Params: $1 now, $2 agentId, $3 type, $4 taskId (null = none), $5 command (jsonb).
   */
  insertAgentCommand: `
    WITH ${CLOCK_CTE}
    INSERT INTO agent_commands (agent_id, type, task_id, command, created_at)
    SELECT $2, $3, $4, $5::jsonb, clock.now FROM clock
    ON CONFLICT (agent_id, type, task_id) WHERE task_id IS NOT NULL DO NOTHING`,

  /**
   * Keep the agent's newest $3 commands, and drop every agent's commands older than $4 ms.
   * Params: $1 now, $2 agentId, $3 keep (>= 1), $4 maxAgeMs.
   */
  trimAgentCommands: `
    WITH ${CLOCK_CTE}
    DELETE FROM agent_commands c USING clock
    WHERE (c.agent_id = $2 AND c.seq < (SELECT seq FROM agent_commands WHERE agent_id = $2
                                        ORDER BY seq DESC OFFSET $3::integer - 1 LIMIT 1))
       OR c.created_at < clock.now - $4::bigint`,

  /** Take (delete) the agent's commands; callers order them by seq. Params: $1 agentId. */

  /** Params: $1 agentId. */
  clearAgentCommands: 'DELETE FROM agent_commands WHERE agent_id = $1',

  /**
   * Save a dependency's state, one version above the last.
   * Params: $1 name, $2 state, $3 until, $4 since, $5 reportedBy, $6 message.
   */
  saveDependency: `
    INSERT INTO dependencies AS d (name, state, until, since, reported_by, message, version)
    VALUES ($1, $2, $3, $4, $5, $6, 1)
    ON CONFLICT (name) DO UPDATE SET state = EXCLUDED.state, until = EXCLUDED.until, since = EXCLUDED.since,
      reported_by = EXCLUDED.reported_by, message = EXCLUDED.message, version = d.version + 1
    RETURNING ${DEPENDENCY_COLUMNS}`,

  listDependencies: `SELECT ${DEPENDENCY_COLUMNS} FROM dependencies ORDER BY name`,
} as const;
