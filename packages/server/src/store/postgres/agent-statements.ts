/**
 * The PostgreSQL agent and lease-shard statements: one named, parameterised statement per store
 * operation. JSON travels as text cast to jsonb; `$1` of timed statements is the store clock.
 */
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
   * An agent-level heartbeat; status and metrics only when given (not null).
   * Params: $1 now, $2 id, $3 status, $4 metrics (jsonb).
   */
  recordAgentHeartbeat: `
    WITH ${CLOCK_CTE}
    UPDATE agents SET last_heartbeat_at = clock.now, status = COALESCE($3, status),
      metrics = COALESCE($4::jsonb, metrics)
    FROM clock WHERE id = $2`,

  /** The agent asked for work. Params: $1 now, $2 id, $3 types (jsonb). */
  recordPoll: `
    WITH ${CLOCK_CTE}
    UPDATE agents SET last_poll_at = clock.now, last_poll_types = $3::jsonb FROM clock WHERE id = $2`,

  /** Params: $1 id, $2 status. */
  setAgentStatus: 'UPDATE agents SET status = $2 WHERE id = $1',
} as const;

export const SHARD_SQL = {
  /**
   * Renew every shard $2 holds and take free or expired shards below $3, lowest first, up to $4 held
   * in total, each until now + $5. A shard nobody held starts at epoch 1; one taken from another owner
   * gets epoch + 1. The take is an upsert whose condition is checked on the locked row, so two
   * coordinators racing for a shard cannot both get it. Returns the shards $2 holds below $3.
   * Params: $1 now, $2 ownerId, $3 shardCount, $4 want, $5 ttlMs.
   */
  acquireShardLeases: `
    WITH ${CLOCK_CTE},
    renewed AS (
      UPDATE shard_leases s SET expires_at = clock.now + $5::bigint FROM clock WHERE s.owner_id = $2
      RETURNING s.shard, s.owner_id, s.epoch, s.expires_at
    ),
    wanted AS (
      SELECT g.shard FROM generate_series(0, $3::integer - 1) AS g(shard)
      CROSS JOIN clock
      LEFT JOIN shard_leases s ON s.shard = g.shard
      WHERE s.shard IS NULL OR (s.owner_id <> $2 AND s.expires_at <= clock.now)
      ORDER BY g.shard
      LIMIT GREATEST($4::integer - (SELECT count(*) FROM renewed WHERE shard < $3::integer), 0)
    ),
    taken AS (
      INSERT INTO shard_leases AS s (shard, owner_id, epoch, expires_at)
      SELECT w.shard, $2, 1, clock.now + $5::bigint FROM wanted w CROSS JOIN clock
      ON CONFLICT (shard) DO UPDATE SET owner_id = EXCLUDED.owner_id, epoch = s.epoch + 1,
        expires_at = EXCLUDED.expires_at
      WHERE s.owner_id <> EXCLUDED.owner_id AND s.expires_at <= EXCLUDED.expires_at - $5::bigint
      RETURNING s.shard, s.owner_id, s.epoch, s.expires_at
    )
    SELECT * FROM renewed WHERE shard < $3::integer
    UNION ALL
    SELECT * FROM taken
    ORDER BY shard`,

  /** Give up every shard $2 holds (it expires now). Params: $1 now, $2 ownerId. */
  releaseShardLeases: `
    WITH ${CLOCK_CTE}
    UPDATE shard_leases s SET expires_at = clock.now FROM clock WHERE s.owner_id = $2 AND s.expires_at > clock.now`,

  /** Every shard lease, in shard order. No params. */
  selectShardLeases: 'SELECT shard, owner_id, epoch, expires_at FROM shard_leases ORDER BY shard',
} as const;
