/**
 * The SQLite task statements: one named, parameterised statement per store operation (or step of
 * one), prepared once per connection. Parameters are named (`@name`); JSON travels as text and
 * booleans as 0/1. Conditional writes compare-and-set on id + version + status.
 */

import { TASK_COLUMN_NAMES, TIMING_COLUMN_NAMES } from '../task-columns.js';

export { TASK_COLUMN_NAMES };

const TASK_COLUMNS = TASK_COLUMN_NAMES.join(', ');
/** Above every task's seq: the start of a listing without a cursor. */
const MAX_SEQ = '9223372036854775807';
/**
 * The optional filters of a task listing. Params: @type, @agentId, @labels (JSON object, all must match),
 * @search (see `TaskQuery.search`).
 */
const LIST_FILTERS = `AND (@type IS NULL OR type = @type)
      AND (@agentId IS NULL OR agent_id = @agentId)
      AND (@labels IS NULL OR NOT EXISTS (
            SELECT 1 FROM json_each(@labels) AS want
            WHERE NOT EXISTS (SELECT 1 FROM json_each(tasks.labels) AS have
                              WHERE have.key = want.key AND have.value = want.value)))
      AND (@search IS NULL OR id = @search OR idempotency_key = @search
           OR instr(lower(payload), lower(@search)) > 0 OR instr(lower(labels), lower(@search)) > 0)`;

/** The small part of a task a write needs to check and compute itself (no payload or results). */
export const HEAD_COLUMNS = `seq, id, status, version, attempt, max_attempts, agent_id, ${TIMING_COLUMN_NAMES.join(', ')}, started_at,
  lease_expires_at, next_attempt_at, progress, phase, execution_done, log_bytes, progress_changed_at, requires`;

/**
 * Writes do not use `RETURNING` for whole rows: in SQLite that costs more than the write itself.
 * They report `changes`, and the task is read back by rowid (`selectTaskBySeq`) in the same
 * transaction. Statements that read whole tasks run in raw (array) mode.
 *
 * `LIMIT +@n`, never `LIMIT @n`: SQLite lets the plan depend on a bare bound LIMIT, so it re-prepares
 * such a statement every time it is bound (tens of µs per call); the unary plus keeps it prepared.
 */
export const TASK_SQL = {
  /** One task by id. Params: @id. */
  selectTask: `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = @id`,

  /** One task by its rowid, after a write. Params: @seq. */
  selectTaskBySeq: `SELECT ${TASK_COLUMNS} FROM tasks WHERE seq = @seq`,

  /** The task holding an idempotency key. Params: @key. */
  selectTaskByIdempotencyKey: `SELECT ${TASK_COLUMNS} FROM tasks WHERE idempotency_key = @key`,

  /** A task's head for checking a write. Params: @id. */
  selectTaskHead: `SELECT ${HEAD_COLUMNS} FROM tasks WHERE id = @id`,

  /**
   * The overview's counts by type and status, and in the same scan (SQLite's reads block the
   * coordinator's thread) how many of each finished since @since: completed, and failed for good.
   */
  summaryByTypeAndStatus: `
    SELECT type, status, count(*) AS count,
           coalesce(sum(finished_at >= @since AND status = 'completed'), 0) AS completed,
           coalesce(sum(finished_at >= @since AND status IN ('failed', 'timeout') AND next_attempt_at IS NULL), 0) AS failed
    FROM tasks GROUP BY type, status`,

  /** created → completed of the newest completed since @since, at most @limit. */
  summaryLatencies: `
    SELECT finished_at - created_at AS ms FROM tasks
    WHERE status = 'completed' AND finished_at >= @since ORDER BY finished_at DESC LIMIT @limit`,

  /**
   * A page of tasks, newest first. Every filter is optional (null = any). Params: @type, @agentId,
   * @labels (JSON object, all must match), @beforeSeq (cursor; a bound of the primary-key walk), @limit.
   */
  listTasks: `
    SELECT ${TASK_COLUMNS} FROM tasks
    WHERE seq < coalesce(@beforeSeq, ${MAX_SEQ})
      ${LIST_FILTERS}
    ORDER BY seq DESC
    LIMIT +@limit`,

  /**
   * `listTasks` of one status other than completed, through the partial index `tasks_status` (its
   * predicate is repeated so that SQLite may use it). Params: @status, then as listTasks.
   */
  listTasksOfStatus: `
    SELECT ${TASK_COLUMNS} FROM tasks
    WHERE status = @status AND status <> 'completed' AND seq < coalesce(@beforeSeq, ${MAX_SEQ})
      ${LIST_FILTERS}
    ORDER BY seq DESC
    LIMIT +@limit`,

  /** `listTasks` of completed tasks: found densely by walking the primary key. Params: as listTasks. */
  listCompletedTasks: `
    SELECT ${TASK_COLUMNS} FROM tasks
    WHERE seq < coalesce(@beforeSeq, ${MAX_SEQ}) AND status = 'completed'
      ${LIST_FILTERS}
    ORDER BY seq DESC
    LIMIT +@limit`,

  /**
   * Append one history entry. @seq comes from tasks.event_count, which the same transaction's write
   * advanced. Params: the TaskEvent fields and @taskId.
   */
  insertEvent: `
    INSERT INTO task_events (task_id, seq, at, from_status, to_status, version, attempt, actor, reason, details)
    VALUES (@taskId, @seq, @at, @from, @to, @version, @attempt, @actor, @reason, @details)`,

  /**
   * A task's stored history, oldest first, each row with the task's created_at (one row with a null
   * seq when nothing is stored; none when there is no such task). Params: @taskId.
   */
  selectEvents: `
    SELECT t.created_at, e.seq, e.at, e.from_status, e.to_status, e.version, e.attempt, e.actor, e.reason,
      e.details
    FROM tasks t LEFT JOIN task_events e ON e.task_id = t.id
    WHERE t.id = @taskId ORDER BY e.seq`,

  /**
   * The stored rows that may hold history entry @seq: the row at @seq, and the row before it (a claim
   * stored with its start holds both, see `claimStartedRow`). Params: @taskId, @seq.
   */
  selectEventRows: `
    SELECT seq, at, from_status, to_status, version, attempt, actor, reason, details
    FROM task_events WHERE task_id = @taskId AND seq IN (@seq - 1, @seq)`,

  /**
   * Claimable tasks of one type in claim order: available now, and requiring none of the unavailable
   * dependencies. Whole rows (raw): the claim builds the claimed task from them instead of reading
   * each back. Params: @type, @now, @unavailable (JSON array), @max.
   */
  selectClaimCandidates: `
    SELECT ${TASK_COLUMNS} FROM tasks
    WHERE type = @type AND available_at <= @now
      AND (@unavailable = '[]' OR requires = '[]' OR NOT EXISTS (
            SELECT 1 FROM json_each(tasks.requires) AS r WHERE r.value IN (SELECT value FROM json_each(@unavailable))))
    ORDER BY priority DESC, seq
    LIMIT +@max`,

  /**
   * Claim one candidate for a new attempt: version and attempt grow, the previous attempt's progress,
   * result and error are cleared; the session is kept, the checkpoint only for resumable tasks.
   * Params: @seq, @version, @from (the status read), @now, @status ('claimed' or with start 'running'),
   * @startedAt (null unless started), @agentId, @leaseExpiresAt, @events (history entries: 1 or 2).
   * `claimedTask` (row-mapping.ts) applies the same changes to the row read: keep them in step.
   */
  claimTask: `
    UPDATE tasks SET status = @status, version = version + 1, attempt = attempt + 1, agent_id = @agentId,
      event_count = event_count + @events,
      claimed_at = @now, started_at = @startedAt, last_heartbeat_at = NULL, lease_expires_at = @leaseExpiresAt,
      next_attempt_at = NULL, finished_at = NULL, progress = NULL, phase = NULL, progress_changed_at = @startedAt,
      execution_done = 0, result = NULL, result_ref = NULL, error = NULL,
      checkpoint = CASE WHEN resumable = 1 THEN checkpoint END
    WHERE seq = @seq AND version = @version AND status = @from AND available_at <= @now`,

  /** claimed → running. Params: @id, @version, @agentId, @now, @leaseExpiresAt. */
  startTask: `
    UPDATE tasks SET status = 'running', started_at = @now, progress_changed_at = @now, event_count = event_count + 1,
      lease_expires_at = @leaseExpiresAt
    WHERE id = @id AND version = @version AND agent_id = @agentId AND status = 'claimed'`,

  /**
   * Renew a lease and record progress. Params: @id, @version, @status (read), @now, @leaseExpiresAt,
   * @progress, @phase, @executionDone, @progressed (1 when progress or phase changed).
   */
  heartbeatTask: `
    UPDATE tasks SET lease_expires_at = @leaseExpiresAt, last_heartbeat_at = @now, progress = @progress,
      phase = @phase, execution_done = @executionDone,
      progress_changed_at = CASE WHEN @progressed = 1 THEN @now ELSE progress_changed_at END
    WHERE id = @id AND version = @version AND status = @status`,

  /**
   * Save resume state; each of state/session only when its flag is 1. Params: @id, @version, @agentId,
   * @setState, @state, @setSession, @session.
   */
  saveCheckpoint: `
    UPDATE tasks SET checkpoint = CASE WHEN @setState = 1 THEN @state ELSE checkpoint END,
      session = CASE WHEN @setSession = 1 THEN @session ELSE session END
    WHERE id = @id AND version = @version AND agent_id = @agentId AND status IN ('claimed', 'running')`,

  /** The last log seq of a task. Params: @taskId. */
  selectLastLogSeq: 'SELECT COALESCE(MAX(seq), 0) AS seq FROM task_logs WHERE task_id = @taskId',

  /** Append one log line. Params: @taskId, @seq, @attempt, @at, @stream, @text. */
  insertLog: `
    INSERT INTO task_logs (task_id, seq, attempt, at, stream, text)
    VALUES (@taskId, @seq, @attempt, @at, @stream, @text)`,

  /** Count appended log bytes. Params: @id, @version, @bytes. */
  addLogBytes: 'UPDATE tasks SET log_bytes = log_bytes + @bytes WHERE id = @id AND version = @version',

  /** Log lines after a seq, oldest first. Params: @taskId, @afterSeq, @limit. */
  selectLogs: `
    SELECT seq, at, attempt, stream, text FROM task_logs
    WHERE task_id = @taskId AND seq > @afterSeq ORDER BY seq LIMIT +@limit`,

  /** Record an uploaded result blob. Params: @id, @version, @agentId, @resultRef (JSON). */
  setResultRef: `
    UPDATE tasks SET result_ref = @resultRef
    WHERE id = @id AND version = @version AND agent_id = @agentId AND status IN ('claimed', 'running')`,

  /**
   * running → completed by the holder. @setResultRef = 1 replaces result_ref with @resultRef.
   * Params: @id, @version, @agentId, @now, @result (JSON or null), @setResultRef, @resultRef.
   */
  completeTask: `
    UPDATE tasks SET status = 'completed', result = @result, finished_at = @now, lease_expires_at = NULL,
      event_count = event_count + 1,
      result_ref = CASE WHEN @setResultRef = 1 THEN @resultRef ELSE result_ref END
    WHERE id = @id AND version = @version AND agent_id = @agentId AND status = 'running'`,

  /**
   * running → failed, scheduling the retry (or final) in the same write.
   * Params: @id, @version, @agentId, @error (JSON), @nextAttemptAt, @finishedAt.
   */
  failTask: `
    UPDATE tasks SET status = 'failed', error = @error, next_attempt_at = @nextAttemptAt,
      finished_at = @finishedAt, lease_expires_at = NULL, event_count = event_count + 1
    WHERE id = @id AND version = @version AND agent_id = @agentId AND status = 'running'`,

  /**
   * claimed|running → timeout once the lease has passed, scheduling the retry in the same write.
   * Params: @id, @version, @status (read), @now, @error (JSON), @nextAttemptAt, @finishedAt.
   */
  expireLease: `
    UPDATE tasks SET status = 'timeout', error = @error, next_attempt_at = @nextAttemptAt,
      finished_at = @finishedAt, lease_expires_at = NULL, event_count = event_count + 1
    WHERE id = @id AND version = @version AND status = @status AND lease_expires_at <= @now`,

  /** running → completed from an uploaded result after execution was reported done. Params: @id, @version, @now. */
  completeFromResultRef: `
    UPDATE tasks SET status = 'completed', finished_at = @now, lease_expires_at = NULL,
      event_count = event_count + 1
    WHERE id = @id AND version = @version AND status = 'running' AND execution_done = 1
      AND result_ref IS NOT NULL`,

  /** Any non-final status → cancelled. Params: @id, @version, @status (read), @now. */
  cancelTask: `
    UPDATE tasks SET status = 'cancelled', finished_at = @now, lease_expires_at = NULL, next_attempt_at = NULL,
      event_count = event_count + 1
    WHERE id = @id AND version = @version AND status = @status`,

  /**
   * A final failed/timeout task becomes claimable now, with at least one attempt left.
   * Params: @id, @version, @status (read), @now.
   */
  retryTask: `
    UPDATE tasks SET next_attempt_at = @now, finished_at = NULL, max_attempts = MAX(max_attempts, attempt + 1),
      event_count = event_count + 1
    WHERE id = @id AND version = @version AND status = @status AND next_attempt_at IS NULL`,

  /** Heads of the tasks an agent holds. Params: @agentId. */
  selectHeldHeads: `
    SELECT ${HEAD_COLUMNS} FROM tasks WHERE agent_id = @agentId AND lease_expires_at IS NOT NULL ORDER BY seq`,

  /**
   * A held task → timeout at once (graceful leave), retried without backoff when attempts are left.
   * Params: @id, @version, @status (read), @error (JSON), @nextAttemptAt, @finishedAt.
   */
  releaseTask: `
    UPDATE tasks SET status = 'timeout', error = @error, next_attempt_at = @nextAttemptAt,
      finished_at = @finishedAt, lease_expires_at = NULL, event_count = event_count + 1
    WHERE id = @id AND version = @version AND status = @status`,

  /** Held leases, optionally only those due by @dueBy (null = all). Params: @dueBy. */
  selectActiveLeases: `
    SELECT id, version, status, lease_expires_at, execution_done, result_ref IS NOT NULL AS has_result_ref,
      heartbeat_timeout_ms
    FROM tasks
    WHERE lease_expires_at IS NOT NULL AND (@dueBy IS NULL OR lease_expires_at <= @dueBy)
    ORDER BY lease_expires_at`,

  /**
   * Held leases in the lease shards @shards (JSON array of shard numbers), optionally only those due
   * by @dueBy (null = all). Params: @shards, @dueBy.
   */
  selectShardLeases: `
    SELECT id, version, status, lease_expires_at, execution_done, result_ref IS NOT NULL AS has_result_ref,
      heartbeat_timeout_ms
    FROM tasks
    WHERE shard IN (SELECT value FROM json_each(@shards))
      AND lease_expires_at IS NOT NULL AND (@dueBy IS NULL OR lease_expires_at <= @dueBy)
    ORDER BY lease_expires_at`,

  /**
   * The earliest claimable moment after @after. Params: @after, @types (JSON array or null = any).
   * `available_at > created_at` (true of every task claimable after a delay) selects the
   * `tasks_deferred` index, which holds only such tasks.
   */
  selectNextClaimableAt: `
    SELECT available_at FROM tasks
    WHERE available_at > @after AND available_at > created_at
      AND (@types IS NULL OR type IN (SELECT value FROM json_each(@types)))
    ORDER BY available_at LIMIT 1`,

  /** A task's place in its queue. Params: @id. */
  selectQueuePosition: 'SELECT seq, type, priority, available_at FROM tasks WHERE id = @id',

  /**
   * Claimable-now tasks of a type that a claim takes before (@priority, @seq).
   * Params: @type, @now, @priority, @seq.
   */
  countAhead: `
    SELECT COUNT(*) AS ahead FROM tasks
    WHERE type = @type AND available_at <= @now
      AND (priority > @priority OR (priority = @priority AND seq < @seq))`,
} as const;
