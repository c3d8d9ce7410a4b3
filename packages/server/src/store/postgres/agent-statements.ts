/**
 * The PostgreSQL agent statements (the watchdog's: `watchdog-statements.ts`; lease shards:
 * `shard-statements.ts`): one named, parameterised statement per store operation. JSON travels as
 * text cast to jsonb; `$1` of timed statements is the store clock. Every statement that writes an
 * agent's conditions or their list (`open_conditions`) holds the agent's row lock first.
 */
import { AGENT_COLUMNS } from '../agent-row.js';
import { derivedStatusSql } from '../agent-status-sql.js';
import { CLOCK_CTE } from './sql-fragments.js';

/** The ids of the tasks agent `a` holds, oldest first (uses the tasks_held index). */
const CURRENT_TASK_IDS = `ARRAY(SELECT t.id FROM tasks t WHERE t.agent_id = a.id AND t.lease_expires_at IS NOT NULL
  ORDER BY t.seq) AS current_task_ids`;

/** Agent `a`'s open conditions, oldest first, as a JSON array of rows (none read when its list is empty). */
const OPEN_CONDITIONS = `CASE WHEN a.open_conditions = '[]'::jsonb THEN '[]'::jsonb ELSE
  (SELECT COALESCE(jsonb_agg(to_jsonb(c) ORDER BY c.seq), '[]'::jsonb) FROM agent_conditions c
   WHERE c.agent_id = a.id AND c.closed_at IS NULL) END AS conditions`;

/** What the wire agent is made of: the row, its held tasks and its open conditions. */
const WIRE_AGENT = `${AGENT_COLUMNS}, ${CURRENT_TASK_IDS}, ${OPEN_CONDITIONS}`;

/**
 * `x` (a jsonb array expression, repeated) without its oldest elements beyond `n`: the bounded rings
 * of samples and gaps. A heartbeat appends one element, so the usual trim drops just the first.
 */
function ring(x: string, n: string): string {
  return `CASE WHEN jsonb_array_length(${x}) <= ${n} THEN ${x}
    WHEN jsonb_array_length(${x}) = ${n} + 1 THEN ${x} - 0
    ELSE (SELECT jsonb_agg(r.e ORDER BY r.o) FROM jsonb_array_elements(${x}) WITH ORDINALITY AS r(e, o)
          WHERE r.o > jsonb_array_length(${x}) - ${n}) END`;
}

export const AGENT_SQL = {
  /**
   * Register an agent: a new slot, active and idle, with its first lease (now + the startup timeout);
   * or — its key already held by a slot of its type — that slot's next incarnation: the same id, the
   * new token and process facts, active and idle again, per-incarnation state reset, a first lease,
   * no open conditions in its list (the caller closes them in the same transaction). Locks the slot's
   * row. Returns the row (incarnation 1: a new slot) with the tasks it holds — or no row when $17
   * (exclusive) is true and the slot's incarnation is still live (active, lease not run out).
   * Params: $1 now, $2 id, $3 key, $4 agentType, $5 name, $6 host, $7 pid, $8 taskTypes (jsonb),
   * $9 labels (jsonb), $10 requires (jsonb), $11 supervisorId, $12 tokenHash, $13 policy, $14 shard,
   * $15 heartbeatIntervalMs, $16 startupTimeoutMs, $17 exclusive (boolean).
   */
  registerAgent: `
    WITH ${CLOCK_CTE}
    INSERT INTO agents AS a (id, agent_key, agent_type, name, host, pid, task_types, labels, requires,
                             supervisor_id, token_hash, policy, shard, registered_at, started_at,
                             reported_status_since, lease_expires_at, heartbeat_interval_ms, heartbeat_timeout_ms)
    SELECT $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10::jsonb, $11, $12, $13, $14, clock.now, clock.now,
           clock.now, clock.now + $16::bigint, $15::bigint, $16::bigint
    FROM clock
    ON CONFLICT (agent_type, agent_key) WHERE agent_key IS NOT NULL DO UPDATE SET
      incarnation = a.incarnation + 1, name = EXCLUDED.name, host = EXCLUDED.host, pid = EXCLUDED.pid,
      task_types = EXCLUDED.task_types, labels = EXCLUDED.labels, requires = EXCLUDED.requires,
      supervisor_id = EXCLUDED.supervisor_id, token_hash = EXCLUDED.token_hash, policy = EXCLUDED.policy,
      started_at = EXCLUDED.started_at, lifecycle = 'active', ended_at = NULL, reported_status = 'idle',
      reported_status_since = EXCLUDED.started_at, status_message = NULL, last_heartbeat_at = NULL,
      lease_expires_at = EXCLUDED.lease_expires_at, heartbeat_interval_ms = EXCLUDED.heartbeat_interval_ms,
      heartbeat_timeout_ms = EXCLUDED.heartbeat_timeout_ms, metrics = NULL, metadata = NULL, progress = NULL,
      phase = NULL, progress_changed_at = NULL, samples = '[]', gaps = '[]', open_conditions = '[]'
    WHERE NOT ($17::boolean AND a.lifecycle = 'active' AND a.lease_expires_at > EXCLUDED.started_at)
    RETURNING ${AGENT_COLUMNS}, ${CURRENT_TASK_IDS}`,

  /** The slot holding a key, for the error of a refused exclusive registration. Params: $1 agentType, $2 key. */
  selectAgentByKey: `
    SELECT id, incarnation, lease_expires_at AS "leaseExpiresAt" FROM agents
    WHERE agent_type = $1 AND agent_key = $2`,

  /** One agent by id, with the tasks it holds and its open conditions. Params: $1 id. */
  selectAgent: `SELECT ${WIRE_AGENT} FROM agents a WHERE a.id = $1`,

  /** Who an agent token belongs to, if active. Params: $1 tokenHash. */
  selectTokenOwner: `
    SELECT id AS "agentId", incarnation, agent_type AS "agentType" FROM agents
    WHERE token_hash = $1 AND lifecycle = 'active'`,

  /**
   * A page of agents in registration order: those after seq $4, at most $5. Filters (null = any):
   * $1 taskType (registered for it or last polled for it), $2 agentType, $3 derived statuses (text[]).
   */
  listAgents: `
    SELECT ${WIRE_AGENT}, a.seq FROM agents a
    WHERE a.seq > $4::bigint
      AND ($1::text IS NULL OR a.task_types ? $1::text OR a.last_poll_types ? $1::text)
      AND ($2::text IS NULL OR a.agent_type = $2::text)
      AND ($3::text[] IS NULL OR ${derivedStatusSql('a', 'a.open_conditions::text')} = ANY($3::text[]))
    ORDER BY a.seq LIMIT $5::bigint`,

  /**
   * Agent-level heartbeats (agent-heartbeat-rules.ts, computed here from the locked row): each active
   * agent of the given incarnation gets its heartbeat time, lease (now + lease_ms, never before the end
   * of its quiet period), status (and since when, moved only by a change; its message only with a
   * status), metrics and metadata (each when given), progress (the stall clock moves when value or
   * phase differ, or never moved), a sample appended to its ring (then cut to max_samples) when the
   * last is spacing_ms old, and the gaps between its heartbeats (cut to max_gaps; none with 0). Rows
   * are locked in seq order. With `take`, its queued commands are taken (deleted) too. Returns one row
   * per agent written: `take`, the agent's columns as the beat left them, and the commands taken
   * (oldest first, or null).
   * Params: $1 now, $2 JSON array of {id, incarnation, take, status, status_message, metrics, metadata,
   * progress ({value, phase} or null), lease_ms, quiet_ms, interval_ms, sample ([rss, cpu, iteration]
   * or null), spacing_ms, max_samples, max_gaps}, each agent once; $3 the same ids (text[]).
   */
  recordAgentHeartbeats: `
    WITH ${CLOCK_CTE},
    cur AS (
      SELECT a.seq, a.progress AS old_progress, a.phase AS old_phase, a.progress_changed_at,
        a.samples AS old_samples, a.gaps AS old_gaps, a.last_heartbeat_at, i.*,
        NULLIF(i.progress->'value', 'null'::jsonb) AS new_progress, i.progress->>'phase' AS new_phase
      FROM jsonb_to_recordset($2::jsonb) AS i(id text, incarnation integer, take boolean, status text,
             status_message text, metrics jsonb, metadata jsonb, progress jsonb, lease_ms bigint, quiet_ms bigint,
             interval_ms bigint, sample jsonb, spacing_ms bigint, max_samples integer, max_gaps integer)
      JOIN agents a ON a.id = i.id
      -- Rows reached through the id index whatever the statistics say: a join on the id alone may
      -- plan as a scan of every agent, for every beat.
      WHERE a.id = ANY($3::text[]) AND a.incarnation = i.incarnation AND a.lifecycle = 'active'
      ORDER BY a.seq
      FOR UPDATE OF a
    ),
    calc AS (
      SELECT cur.seq, cur.take, cur.status, cur.status_message, cur.metrics, cur.metadata, cur.lease_ms,
        cur.quiet_ms, cur.interval_ms, cur.progress IS NOT NULL AS has_progress, cur.new_progress, cur.new_phase,
        cur.progress IS NOT NULL AND (cur.progress_changed_at IS NULL
          OR cur.new_progress IS DISTINCT FROM cur.old_progress OR cur.new_phase IS DISTINCT FROM cur.old_phase)
          AS progressed,
        CASE WHEN cur.sample IS NOT NULL AND ((cur.old_samples->-1->>0)::bigint IS NULL
                  OR clock.now - (cur.old_samples->-1->>0)::bigint >= cur.spacing_ms)
             THEN cur.old_samples || jsonb_build_array(jsonb_build_array(clock.now) || cur.sample) END AS samples,
        GREATEST(1, cur.max_samples) AS max_samples,
        CASE WHEN cur.max_gaps <= 0 THEN '[]'::jsonb
             WHEN cur.last_heartbeat_at IS NULL THEN cur.old_gaps
             ELSE cur.old_gaps || to_jsonb(clock.now - cur.last_heartbeat_at) END AS gaps,
        GREATEST(cur.max_gaps, 0) AS max_gaps,
        clock.now
      FROM cur CROSS JOIN clock
    ),
    beat AS (
      UPDATE agents a SET last_heartbeat_at = c.now,
        lease_expires_at = GREATEST(c.now + c.lease_ms, a.started_at + c.quiet_ms),
        heartbeat_interval_ms = c.interval_ms, heartbeat_timeout_ms = c.lease_ms,
        reported_status = COALESCE(c.status, a.reported_status),
        reported_status_since = CASE WHEN c.status <> a.reported_status THEN c.now ELSE a.reported_status_since END,
        status_message = CASE WHEN c.status IS NULL THEN a.status_message ELSE c.status_message END,
        metrics = COALESCE(c.metrics, a.metrics), metadata = COALESCE(c.metadata, a.metadata),
        progress = CASE WHEN c.has_progress THEN c.new_progress ELSE a.progress END,
        phase = CASE WHEN c.has_progress THEN c.new_phase ELSE a.phase END,
        progress_changed_at = CASE WHEN c.progressed THEN c.now ELSE a.progress_changed_at END,
        samples = CASE WHEN c.samples IS NULL THEN a.samples ELSE ${ring('c.samples', 'c.max_samples')} END,
        gaps = ${ring('c.gaps', 'c.max_gaps')}
      FROM calc c
      WHERE a.seq = c.seq
      RETURNING c.take, ${AGENT_COLUMNS}
    ),
    taken AS (
      DELETE FROM agent_commands k USING beat b WHERE b.take AND k.agent_id = b.id
      RETURNING k.agent_id, k.seq, k.command
    )
    SELECT b.*, (SELECT jsonb_agg(t.command ORDER BY t.seq) FROM taken t WHERE t.agent_id = b.id) AS commands,
      ARRAY(SELECT h.id FROM tasks h WHERE h.agent_id = b.id AND h.lease_expires_at IS NOT NULL
            ORDER BY h.seq) AS held_task_ids
    FROM beat b`,

  /** The agent asked for work. Params: $1 now, $2 id, $3 types (jsonb). */
  recordPoll: `
    WITH ${CLOCK_CTE}
    UPDATE agents SET last_poll_at = clock.now, last_poll_types = $3::jsonb FROM clock WHERE id = $2`,

  /**
   * The agent left or was ended: no lease, its token stops resolving (locks its row; the caller
   * closes its conditions in the same transaction). Returns whether the agent exists and whether this
   * ended it. Params: $1 now, $2 id, $3 lifecycle ('left' | 'terminated').
   */
  endAgent: `
    WITH ${CLOCK_CTE},
    ended AS (
      UPDATE agents a SET lifecycle = $3, ended_at = clock.now, lease_expires_at = NULL
      FROM clock
      WHERE a.id = $2 AND a.lifecycle = 'active'
      RETURNING a.id
    )
    SELECT EXISTS (SELECT 1 FROM agents WHERE id = $2) AS found, EXISTS (SELECT 1 FROM ended) AS ended`,

  /**
   * Queue a command, unless the same one about the same task is still waiting, and trim in the same
   * round trip: when it was queued, the agent keeps its newest $6 commands (the new one and the
   * $6 - 1 newest before it: the statement does not see its own insert), and every agent's commands
   * older than $7 ms go.
   * Params: $1 now, $2 agentId, $3 type, $4 taskId (null = none), $5 command (jsonb), $6 keep (>= 1),
   * $7 maxAgeMs.
   */
  queueAgentCommand: `
    WITH ${CLOCK_CTE},
    queued AS (
      INSERT INTO agent_commands (agent_id, type, task_id, command, created_at)
      SELECT $2, $3, $4, $5::jsonb, clock.now FROM clock
      ON CONFLICT (agent_id, type, task_id) WHERE task_id IS NOT NULL DO NOTHING
      RETURNING seq
    )
    DELETE FROM agent_commands c USING clock
    WHERE (c.agent_id = $2 AND EXISTS (SELECT 1 FROM queued)
           AND c.seq NOT IN (SELECT seq FROM agent_commands WHERE agent_id = $2
                             ORDER BY seq DESC LIMIT $6::integer - 1))
       OR c.created_at < clock.now - $7::bigint`,

  /** Params: $1 agentId. */
  clearAgentCommands: 'DELETE FROM agent_commands WHERE agent_id = $1',
  /** Take (delete and return) the agent's commands. Params: $1 agent id. */
  takeAgentCommands: 'DELETE FROM agent_commands WHERE agent_id = $1 RETURNING seq, command',
} as const;
