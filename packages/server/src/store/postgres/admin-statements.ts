/**
 * The PostgreSQL statements for coordinator and operator writes (lease expiry, completion from a
 * result blob, cancel, manual retry, graceful leave) and the lease and queue queries. Same rules as
 * `task-statements.ts`: one statement per operation, history in the same statement, `$1` = store clock.
 * Admin writes lock the row they act on (`FOR UPDATE`), so the condition is checked on the latest
 * version and two coordinators acting at once make one transition.
 */
import pg from 'pg';
import {
  CLOCK_CTE,
  EVENT_COLUMNS,
  eventsOf,
  finalSql,
  taskBackoffSql,
  taskColumns,
} from './sql-fragments.js';

const T = taskColumns('t');

const LEASE_COLUMNS = `id, version, status, lease_expires_at, execution_done, result_ref IS NOT NULL AS has_result_ref,
  heartbeat_timeout_ms`;

export const ADMIN_SQL = {
  /**
   * claimed|running → timeout once this version's lease has passed by the store clock, scheduling the
   * retry (now + backoff — the task's own, else these — while attempts are left) in the same write. The reason: claim_timeout for a
   * claimed task, attempt_deadline once past startedAt + attemptDeadlineMs, else heartbeat_timeout.
   * Params: $1 now, $2 id, $3 version, $4 backoff baseMs, $5 capMs, $6 jitter, $7 messages (jsonb:
   * reason → text).
   */
  expireLease: `
    WITH ${CLOCK_CTE},
    cur AS (
      SELECT t.seq, t.status, t.lease_expires_at,
        CASE WHEN t.status = 'claimed' THEN 'claim_timeout'
             WHEN t.started_at IS NOT NULL AND clock.now >= t.started_at + t.attempt_deadline_ms
               THEN 'attempt_deadline'
             ELSE 'heartbeat_timeout' END AS reason,
        CASE WHEN t.attempt < t.max_attempts THEN clock.now + ${taskBackoffSql('t', '$4', '$5', '$6')} END AS next
      FROM tasks t CROSS JOIN clock
      WHERE t.id = $2 AND t.version = $3 AND t.status IN ('claimed', 'running') AND t.lease_expires_at <= clock.now
      FOR UPDATE OF t
    ),
    upd AS (
      UPDATE tasks t SET status = 'timeout',
        error = jsonb_build_object('code', cur.reason, 'message', $7::jsonb->>cur.reason, 'retryable', true),
        next_attempt_at = cur.next, finished_at = CASE WHEN cur.next IS NULL THEN clock.now END,
        lease_expires_at = NULL, event_count = t.event_count + 1
      FROM cur, clock
      WHERE t.seq = cur.seq
      RETURNING ${T}, cur.status AS from_status, cur.reason, cur.lease_expires_at AS expired_lease, clock.now AS at
    ),
    ev AS (
      INSERT INTO task_events (${EVENT_COLUMNS})
      SELECT id, event_count, at, from_status, 'timeout', version, attempt, 'coordinator', reason,
             jsonb_build_object('leaseExpiresAt', expired_lease, 'nextAttemptAt', next_attempt_at) FROM upd
      RETURNING *
    )
    SELECT u.*, ${eventsOf('ev')} FROM upd u`,

  /**
   * running → completed from an uploaded result after execution was reported done.
   * Params: $1 now, $2 id, $3 version.
   */
  completeFromResultRef: `
    WITH ${CLOCK_CTE},
    upd AS (
      UPDATE tasks t SET status = 'completed', finished_at = clock.now, lease_expires_at = NULL,
        event_count = t.event_count + 1
      FROM clock
      WHERE t.id = $2 AND t.version = $3 AND t.status = 'running' AND t.execution_done AND t.result_ref IS NOT NULL
      RETURNING ${T}, clock.now AS at
    ),
    ev AS (
      INSERT INTO task_events (${EVENT_COLUMNS})
      SELECT id, event_count, at, 'running', 'completed', version, attempt, 'coordinator',
             'completed_from_result_ref', NULL FROM upd
      RETURNING *
    )
    SELECT u.*, ${eventsOf('ev')} FROM upd u`,

  /**
   * Any non-final task in one of the statuses $3 (those the table lets go to cancelled) → cancelled.
   * Params: $1 now, $2 id, $3 from statuses (text[]), $4 actor, $5 reason.
   */
  cancelTask: `
    WITH ${CLOCK_CTE},
    cur AS (
      SELECT t.seq, t.status FROM tasks t
      WHERE t.id = $2 AND t.status = ANY($3::text[]) AND NOT ${finalSql('t')}
      FOR UPDATE
    ),
    upd AS (
      UPDATE tasks t SET status = 'cancelled', finished_at = clock.now, lease_expires_at = NULL,
        next_attempt_at = NULL, event_count = t.event_count + 1
      FROM cur, clock
      WHERE t.seq = cur.seq
      RETURNING ${T}, cur.status AS from_status, clock.now AS at
    ),
    ev AS (
      INSERT INTO task_events (${EVENT_COLUMNS})
      SELECT id, event_count, at, from_status, 'cancelled', version, attempt, $4::text, $5::text, NULL FROM upd
      RETURNING *
    )
    SELECT u.*, ${eventsOf('ev')} FROM upd u`,

  /**
   * A final failed/timeout task becomes claimable now, with at least one attempt left; the history
   * entry is an annotation (from = to). Params: $1 now, $2 id, $3 actor.
   */
  retryTask: `
    WITH ${CLOCK_CTE},
    cur AS (
      SELECT t.seq FROM tasks t
      WHERE t.id = $2 AND t.status IN ('failed', 'timeout') AND t.next_attempt_at IS NULL
      FOR UPDATE
    ),
    upd AS (
      UPDATE tasks t SET next_attempt_at = clock.now, finished_at = NULL,
        max_attempts = GREATEST(t.max_attempts, t.attempt + 1), event_count = t.event_count + 1
      FROM cur, clock
      WHERE t.seq = cur.seq
      RETURNING ${T}, clock.now AS at
    ),
    ev AS (
      INSERT INTO task_events (${EVENT_COLUMNS})
      SELECT id, event_count, at, status, status, version, attempt, $3::text, 'retry_requested',
             jsonb_build_object('nextAttemptAt', at, 'maxAttempts', max_attempts) FROM upd
      RETURNING *
    )
    SELECT u.*, ${eventsOf('ev')} FROM upd u`,

  /**
   * Every task an agent holds → timeout at once (graceful leave), retried without backoff when
   * attempts are left — or only task $6 at version $7 when given (a reassignment). Params: $1 now,
   * $2 agentId, $3 error (jsonb), $4 reason, $5 actor, $6 task id or null, $7 version or null.
   */
  releaseAgentTasks: `
    WITH ${CLOCK_CTE},
    cur AS (
      SELECT t.seq, t.status FROM tasks t
      WHERE t.agent_id = $2 AND t.lease_expires_at IS NOT NULL
        AND ($6::text IS NULL OR (t.id = $6 AND t.version = $7::integer))
      ORDER BY t.seq
      FOR UPDATE
    ),
    upd AS (
      UPDATE tasks t SET status = 'timeout', error = $3::jsonb,
        next_attempt_at = CASE WHEN t.attempt < t.max_attempts THEN clock.now END,
        finished_at = CASE WHEN t.attempt < t.max_attempts THEN NULL ELSE clock.now END,
        lease_expires_at = NULL, event_count = t.event_count + 1
      FROM clock
      WHERE t.seq = ANY(ARRAY(SELECT seq FROM cur))
      RETURNING ${T}, (SELECT cur.status FROM cur WHERE cur.seq = t.seq) AS from_status, clock.now AS at
    ),
    ev AS (
      INSERT INTO task_events (${EVENT_COLUMNS})
      SELECT id, event_count, at, from_status, 'timeout', version, attempt, $5::text, $4::text,
             jsonb_build_object('nextAttemptAt', next_attempt_at, 'final', next_attempt_at IS NULL) FROM upd
      RETURNING *
    )
    SELECT u.*, ${eventsOf('ev')} FROM upd u ORDER BY u.seq`,

  /** Held leases due by $1 (every one: a far future), in deadline order. Params: $1 dueBy. */
  selectActiveLeases: `
    SELECT ${LEASE_COLUMNS} FROM tasks
    WHERE lease_expires_at <= $1::bigint
    ORDER BY lease_expires_at`,

  /**
   * Held leases in the lease shards $2 due by $1, in deadline order: one range of the shard index
   * per shard (the shard owner's sweep, every second). Params: $1 dueBy, $2 shards (integer[]).
   */
  selectShardLeases: `
    SELECT ${LEASE_COLUMNS} FROM tasks
    WHERE shard = ANY($2::integer[]) AND lease_expires_at <= $1::bigint
    ORDER BY lease_expires_at`,

  /**
   * The earliest claimable moment after $3 (null: now). Params: $1 now, $2 types (text[], null =
   * any), $3 after. `available_at > created_at` (true of every task claimable after a delay) selects
   * the `tasks_deferred` index, which holds only such tasks.
   */
  selectNextClaimableAt: `
    WITH ${CLOCK_CTE}
    SELECT t.available_at FROM tasks t CROSS JOIN clock
    WHERE t.available_at > COALESCE($3::bigint, clock.now) AND t.available_at > t.created_at
      AND ($2::text[] IS NULL OR t.type = ANY($2::text[]))
    ORDER BY t.available_at LIMIT 1`,

  /**
   * A task's place in its queue: its available_at, and the claimable-now tasks of its type a claim
   * takes before it. No row: unknown task. Params: $1 now, $2 id.
   */
  selectQueueStats: `
    WITH ${CLOCK_CTE}
    SELECT p.available_at,
      (SELECT count(*) FROM tasks t
       WHERE t.type = p.type AND t.available_at <= clock.now
         AND (t.priority > p.priority OR (t.priority = p.priority AND t.seq < p.seq))) AS ahead
    FROM tasks p CROSS JOIN clock
    WHERE p.id = $2`,

  /** The database's clock, in epoch ms. No params. */
  selectNow: 'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now',
} as const;

/**
 * Publish a notice on a channel, committed asynchronously: a notice carries no durable state (it is
 * a wake-up; long polls also end on their own), so it need not wait for a WAL flush — with
 * `synchronous_commit=on` that wait was a flush per notice, as much as the write that caused it.
 * Listeners hear it at commit either way. Two statements in one simple query: one implicit
 * transaction (so `SET LOCAL` applies to it alone), and on error nothing stays open. Literals are
 * escaped because the simple protocol takes no parameters.
 */
export function notifyAsyncSql(channel: string, payload: string): string {
  return `SET LOCAL synchronous_commit TO off; SELECT pg_notify(${pg.escapeLiteral(channel)}, ${pg.escapeLiteral(payload)})`;
}
