/**
 * The PostgreSQL watchdog statements: conditions, agent leases, baselines, status counts and
 * dependency states, one named, parameterised statement per operation. An agent's conditions and its
 * list of them (`agents.open_conditions`) change only under the agent row's lock: a statement that
 * opens or closes one either takes that lock itself before it writes, or runs in a transaction that
 * took it (`lockAgents`) — so the list is always its open conditions in opening order, whatever the
 * coordinators sharing the database do at once.
 */
import { AGENT_COLUMNS, CONDITION_COLUMNS } from '../agent-row.js';
import { DEPENDENCY_COLUMNS } from '../dependency-row.js';
import { CLOCK_CTE } from './sql-fragments.js';

/** The columns of agent_conditions `c`, unqualified (for RETURNING from an alias-less statement). */
const CONDITION_FIELDS = CONDITION_COLUMNS.replaceAll('c.', '');

/** How `open_conditions` names a condition of agent_conditions `c`: `kind` or `kind taskId`. */
const TOKEN = `CASE WHEN c.task_id = '' THEN c.condition ELSE c.condition || ' ' || c.task_id END`;

export const WATCHDOG_SQL = {
  /** Lock the agents' rows, in seq order, for a transaction that changes their conditions. Params: $1 ids (text[]). */
  lockAgents: 'SELECT a.id FROM agents a WHERE a.id = ANY($1::text[]) ORDER BY a.seq FOR UPDATE',

  /**
   * Open and close conditions (a batch with each agent, kind and task at most once), inside a
   * transaction that holds the agents' locks: an open only for an agent active in that incarnation and
   * only when not open already (the partial unique index decides, also against a writer that got there
   * first), in input order; a close only of an open one. Returns the rows written.
   * Params: $1 now, $2 JSON array of {i, kind ('open' | 'close'), agent_id, incarnation, condition,
   * task_id ('' = none), since, evidence, opened_by, reason}, $3 their agents' ids (text[]).
   * Agents and conditions are reached through their indexes on the agent's id whatever the
   * statistics say (see recordAgentHeartbeats).
   */
  applyConditionChanges: `
    WITH ${CLOCK_CTE},
    input AS (
      SELECT * FROM jsonb_to_recordset($2::jsonb) AS i(i integer, kind text, agent_id text, incarnation integer,
        condition text, task_id text, since bigint, evidence jsonb, opened_by text, reason text)
    ),
    opened AS (
      INSERT INTO agent_conditions (agent_id, incarnation, agent_type, condition, task_id, since, evidence,
                                    opened_by, opened_at)
      SELECT i.agent_id, i.incarnation, a.agent_type, i.condition, i.task_id, i.since, i.evidence, i.opened_by,
             clock.now
      FROM input i JOIN agents a ON a.id = i.agent_id CROSS JOIN clock
      WHERE i.kind = 'open' AND a.id = ANY($3::text[]) AND a.incarnation = i.incarnation
        AND a.lifecycle = 'active'
      ORDER BY i.i
      ON CONFLICT (agent_id, condition, task_id) WHERE closed_at IS NULL DO NOTHING
      RETURNING ${CONDITION_FIELDS}
    ),
    closed AS (
      UPDATE agent_conditions c SET closed_at = clock.now, close_reason = i.reason
      FROM input i CROSS JOIN clock
      WHERE i.kind = 'close' AND c.agent_id = ANY($3::text[]) AND c.agent_id = i.agent_id
        AND c.condition = i.condition AND c.task_id = i.task_id AND c.closed_at IS NULL
      RETURNING ${CONDITION_COLUMNS}
    )
    SELECT * FROM opened
    UNION ALL
    SELECT * FROM closed`,

  /**
   * After a transaction's condition changes, still holding the agents' locks: each agent's list of
   * open conditions, read again from them in opening order, and its closed history cut to the newest
   * $2. Params: $1 agent ids (text[]), $2 closed conditions kept per agent (>= 1).
   */
  refreshOpenConditions: `
    WITH cut AS (
      SELECT t.id, (SELECT k.seq FROM agent_conditions k WHERE k.agent_id = t.id AND k.closed_at IS NOT NULL
                    ORDER BY k.seq DESC OFFSET $2::integer - 1 LIMIT 1) AS seq
      FROM unnest($1::text[]) AS t(id)
    ),
    trimmed AS (
      DELETE FROM agent_conditions c USING cut
      WHERE c.agent_id = ANY($1::text[]) AND c.agent_id = cut.id AND c.closed_at IS NOT NULL
        AND c.seq < cut.seq
    )
    UPDATE agents a SET open_conditions = (
      SELECT COALESCE(jsonb_agg(${TOKEN} ORDER BY c.seq), '[]'::jsonb) FROM agent_conditions c
      WHERE c.agent_id = a.id AND c.closed_at IS NULL)
    WHERE a.id = ANY($1::text[])`,

  /**
   * Close every open condition of an agent (its list emptied) and, with $4, drop its queued commands:
   * inside a transaction that holds its lock (a registration that replaced an incarnation, an agent
   * that ended). Returns the closed conditions, oldest first.
   * Params: $1 now, $2 agentId, $3 reason, $4 clear commands (boolean).
   */
  closeAllConditions: `
    WITH ${CLOCK_CTE},
    closed AS (
      UPDATE agent_conditions c SET closed_at = clock.now, close_reason = $3
      FROM clock
      WHERE c.agent_id = $2 AND c.closed_at IS NULL
      RETURNING ${CONDITION_COLUMNS}
    ),
    emptied AS (UPDATE agents SET open_conditions = '[]' WHERE id = $2 AND open_conditions <> '[]'),
    cleared AS (DELETE FROM agent_commands WHERE agent_id = $2 AND $4::boolean)
    SELECT * FROM closed ORDER BY seq`,

  /**
   * Conditions newest first. Params: $1 agentId (null = all), $2 open (null = any, true open, false
   * closed), $3 limit.
   */
  listConditions: `
    SELECT ${CONDITION_COLUMNS} FROM agent_conditions c
    WHERE ($1::text IS NULL OR c.agent_id = $1::text) AND ($2::boolean IS NULL OR (c.closed_at IS NULL) = $2::boolean)
    ORDER BY c.seq DESC LIMIT $3`,

  /** Conditions by seq (in no particular order). Params: $1 seqs (bigint[]). */
  readConditions: `SELECT ${CONDITION_COLUMNS} FROM agent_conditions c WHERE c.seq = ANY($1::bigint[])`,

  /** The watch state of agents by id (in no particular order). Params: $1 ids (text[]). */
  selectAgentWatches: `
    SELECT ${AGENT_COLUMNS},
      ARRAY(SELECT h.id FROM tasks h WHERE h.agent_id = a.id AND h.lease_expires_at IS NOT NULL
            ORDER BY h.seq) AS held_task_ids
    FROM agents a WHERE a.id = ANY($1::text[])`,

  /**
   * Agent leases in the lease shards $2 ending by $1, soonest first: one range of the agents_shard_leases
   * index per shard (the shard owner's lookahead, every second). Params: $1 dueBy, $2 shards (integer[]).
   */
  dueAgentLeases: `
    SELECT id, incarnation, lease_expires_at, last_heartbeat_at, started_at, heartbeat_interval_ms,
           heartbeat_timeout_ms
    FROM agents
    WHERE shard = ANY($2::integer[]) AND lease_expires_at <= $1::bigint
    ORDER BY lease_expires_at`,

  /**
   * The agents are lost (a batch, each agent once): no lease any more, and an open heartbeat_timeout
   * condition (once: not when one is open already) added to their list, under the row lock the
   * statement takes in seq order. Only for an agent active in that incarnation whose lease has passed
   * by the store clock. Returns the conditions opened. Params: $1 now, $2 JSON array of {i, id,
   * incarnation, evidence, opened_by}, $3 the same ids (text[]).
   */
  markAgentsLost: `
    WITH ${CLOCK_CTE},
    cur AS (
      SELECT a.seq, i.i, i.evidence, i.opened_by
      FROM jsonb_to_recordset($2::jsonb) AS i(i integer, id text, incarnation integer, evidence jsonb,
             opened_by text)
      JOIN agents a ON a.id = i.id
      CROSS JOIN clock
      -- Rows reached through the id index whatever the statistics say (see recordAgentHeartbeats).
      WHERE a.id = ANY($3::text[])
        AND a.incarnation = i.incarnation AND a.lifecycle = 'active' AND a.lease_expires_at IS NOT NULL
        AND a.lease_expires_at <= clock.now
      ORDER BY a.seq
      FOR UPDATE OF a
    ),
    lost AS (
      UPDATE agents a SET lease_expires_at = NULL,
        open_conditions = CASE WHEN a.open_conditions ? 'heartbeat_timeout' THEN a.open_conditions
                               ELSE a.open_conditions || '["heartbeat_timeout"]'::jsonb END
      FROM cur c
      WHERE a.seq = c.seq
      RETURNING c.i, a.id, a.incarnation, a.agent_type, c.evidence, c.opened_by
    )
    INSERT INTO agent_conditions (agent_id, incarnation, agent_type, condition, task_id, since, evidence,
                                  opened_by, opened_at)
    SELECT l.id, l.incarnation, l.agent_type, 'heartbeat_timeout', '', clock.now, l.evidence, l.opened_by, clock.now
    FROM lost l CROSS JOIN clock
    ORDER BY l.i
    ON CONFLICT (agent_id, condition, task_id) WHERE closed_at IS NULL DO NOTHING
    RETURNING ${CONDITION_FIELDS}`,

  /**
   * Save coordinators' baselines (each type, metric and coordinator once), replacing earlier ones.
   * Params: $1 now, $2 JSON array of {agent_type, metric, coordinator_id, histogram}.
   */
  saveBaselines: `
    WITH ${CLOCK_CTE}
    INSERT INTO agent_type_baselines AS b (agent_type, metric, coordinator_id, histogram, updated_at)
    SELECT r.agent_type, r.metric, r.coordinator_id, r.histogram, clock.now
    FROM jsonb_to_recordset($2::jsonb) AS r(agent_type text, metric text, coordinator_id text, histogram jsonb)
    CROSS JOIN clock
    ON CONFLICT (agent_type, metric, coordinator_id) DO UPDATE SET histogram = EXCLUDED.histogram,
      updated_at = EXCLUDED.updated_at`,

  listBaselines: `
    SELECT agent_type, metric, coordinator_id, histogram, updated_at FROM agent_type_baselines
    ORDER BY agent_type, metric, coordinator_id`,

  /** Agents grouped by what decides their derived status. */
  agentStatusCounts: `
    SELECT lifecycle, reported_status, open_conditions, count(*) AS count FROM agents
    GROUP BY lifecycle, reported_status, open_conditions`,

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
