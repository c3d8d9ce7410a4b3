/**
 * The PostgreSQL task statements for creating, reading and the holder's writes: one named,
 * parameterised statement per store operation. Each write is ONE statement — the conditional UPDATE,
 * its history entries (a data-modifying CTE `ev`) and the row it returns — so it is atomic and costs one
 * round trip. Timed statements take the store clock as `$1` (see `CLOCK_CTE`). JSON travels as text
 * cast to jsonb; batches travel as one JSON array read with `jsonb_to_recordset`, or as arrays of values
 * (new tasks, `task-inserts.ts`; completions, on the hot path, as typed parallel arrays read with
 * `unnest`).
 */

import {
  CLOCK_CTE,
  EVENT_COLUMNS,
  eventsOf,
  leaseDeadlineSql,
  TASK_COLUMN_NAMES,
  taskBackoffSql,
  taskColumns,
} from './sql-fragments.js';
import { INSERT_TASKS_SQL } from './task-inserts.js';

const COLS = TASK_COLUMN_NAMES.join(', ');
const T = taskColumns('t');
/**
 * The filters of a task listing over alias `t`; the cursor (`seq` below it, or below every seq) is an
 * index condition. Params: $1 beforeSeq, $2 type, $3 agentId, $4 labels (jsonb object, all must match),
 * $6 search text or null (see `TaskQuery.search`; $5 is the listing's limit).
 */
const LIST_FILTERS = `t.seq < COALESCE($1::bigint, 9223372036854775807)
         AND ($2::text IS NULL OR t.type = $2::text)
         AND ($3::text IS NULL OR t.agent_id = $3::text)
         AND ($4::jsonb IS NULL OR t.labels @> $4::jsonb)
         AND ($6::text IS NULL OR t.id = $6::text OR t.idempotency_key = $6::text
              OR strpos(lower(t.payload::text), lower($6::text)) > 0
              OR strpos(lower(t.labels::text), lower($6::text)) > 0)`;

/**
 * What the claim and completion statements return per written row: ONE json column `r`, an array of
 * the task columns, the statement's time `at` and (claims) the status the attempt came from. As one
 * array the driver reads a single field per row and `JSON.parse` builds it, instead of 39 fields each
 * decoded and converted on its own (the coordinator's CPU per task in W2 fell by a tenth; building the
 * arrays cost the database nothing measurable). Their history entries are not read back (aggregating
 * them as JSON per row cost more database CPU than the rest of the statement's output): each is fully
 * determined by these values — the INSERT of the same statement writes exactly them — and
 * `claimedTransition` / `completedTransition` (postgres-task-writes.ts) rebuild them.
 */
const CLAIMED = `json_build_array(${taskColumns('u')}, u.at, u.from_status) AS r`;
const COMPLETED = `json_build_array(${taskColumns('u')}, u.at, NULL::text) AS r`;

/**
 * The claim as CTEs `cand` (candidates, locked), `upd` (the new attempt) and `ev` (history). Per type
 * the candidates come from the claim index in order, skipping rows another claim has locked; a row is
 * re-checked under its lock, so an attempt is never claimed twice. The rows are updated through
 * `= ANY(ARRAY(...))` so that even a generic plan reaches them by primary key. Parameters, in order:
 * types (text[]), max, agentId, unavailable dependencies (text[]), start (boolean), actor.
 */
function claimCtes([types, max, agentId, unavailable, start, actor]: string[]): string {
  return `
    cand AS (
      SELECT c.seq, c.status AS from_status, c.priority
      FROM unnest(${types}::text[]) AS ty(type)
      CROSS JOIN clock
      CROSS JOIN LATERAL (
        SELECT t.seq, t.status, t.priority FROM tasks t
        -- "+ 0" (and no bitmap scans, see pgConfig): the plan walks tasks_claim in claim order and
        -- stops at the LIMIT, instead of collecting every claimable row and sorting them (ms each
        -- with 20k queued), whatever the statistics say.
        WHERE t.type = ty.type AND t.available_at IS NOT NULL AND t.available_at + 0 <= clock.now
          AND (cardinality(${unavailable}::text[]) = 0 OR NOT (t.requires ?| ${unavailable}::text[]))
        ORDER BY t.priority DESC, t.seq
        LIMIT ${max}::integer
        FOR UPDATE SKIP LOCKED
      ) c
      ORDER BY c.priority DESC, c.seq
      LIMIT ${max}::integer
    ),
    upd AS (
      UPDATE tasks t SET status = CASE WHEN ${start}::boolean THEN 'running' ELSE 'claimed' END,
        version = t.version + 1, attempt = t.attempt + 1, agent_id = ${agentId}::text,
        event_count = t.event_count + CASE WHEN ${start}::boolean THEN 2 ELSE 1 END,
        claimed_at = clock.now, started_at = CASE WHEN ${start}::boolean THEN clock.now END,
        last_heartbeat_at = NULL,
        lease_expires_at = CASE WHEN ${start}::boolean THEN ${leaseDeadlineSql('start', 't', 'clock.now')}
                                ELSE ${leaseDeadlineSql('claim', 't', 'clock.now')} END,
        next_attempt_at = NULL, finished_at = NULL, progress = NULL, phase = NULL,
        progress_changed_at = CASE WHEN ${start}::boolean THEN clock.now END,
        execution_done = false, result = NULL, result_ref = NULL, error = NULL,
        checkpoint = CASE WHEN t.resumable THEN t.checkpoint END
      FROM clock
      WHERE t.seq = ANY(ARRAY(SELECT seq FROM cand))
      RETURNING ${T}, (SELECT cand.from_status FROM cand WHERE cand.seq = t.seq) AS from_status, clock.now AS at
    ),
    ev AS (
      -- With start, the claim and its start are one row ending in running (see claimStartedRow).
      INSERT INTO task_events (${EVENT_COLUMNS})
      SELECT id, event_count - CASE WHEN ${start}::boolean THEN 1 ELSE 0 END, at, from_status,
             CASE WHEN ${start}::boolean THEN 'running' ELSE 'claimed' END, version, attempt, ${actor}::text,
             'claimed', NULL::jsonb
      FROM upd
    )`;
}

/**
 * Completion by the holder as CTEs `cupd` (running → completed; set_ref replaces result_ref) and `cev`
 * (history), for the batch in parallel array parameters (one element per item, no task twice), in
 * order: i (integer[], the item's index), id (text[]), agent_id (text[]), version (integer[]), actor
 * (text[]), result (text[], JSON text or null), set_ref (boolean[]), result_ref (text[], JSON text or
 * null). Typed arrays rather than one JSON document: nothing is parsed as JSON but the results.
 */
function completeCtes([i, id, agentId, version, actor, result, setRef, resultRef]: string[]): string {
  return `
    cupd AS (
      UPDATE tasks t SET status = 'completed', result = c.result::jsonb, finished_at = clock.now,
        lease_expires_at = NULL, event_count = t.event_count + 1,
        result_ref = CASE WHEN c.set_ref THEN c.result_ref::jsonb ELSE t.result_ref END
      FROM unnest(${i}::integer[], ${id}::text[], ${agentId}::text[], ${version}::integer[], ${actor}::text[],
             ${result}::text[], ${setRef}::boolean[], ${resultRef}::text[])
             AS c(i, id, agent_id, version, actor, result, set_ref, result_ref)
      CROSS JOIN clock
      -- Rows reached through the id index whatever the statistics say (a join on c.id alone may
      -- plan as a scan of every task).
      WHERE t.id = ANY(${id}::text[])
        AND t.id = c.id AND t.version = c.version AND t.agent_id = c.agent_id AND t.status = 'running'
      RETURNING c.i, c.actor, ${T}, clock.now AS at
    ),
    cev AS (
      INSERT INTO task_events (${EVENT_COLUMNS})
      SELECT id, event_count, at, 'running', 'completed', version, attempt, actor, 'completed', NULL FROM cupd
    )`;
}

export const TASK_SQL = {
  /** Insert a batch of new tasks (`task-inserts.ts`). */
  insertTasks: INSERT_TASKS_SQL,

  /** The tasks holding any of these idempotency keys. Params: $1 keys (text[]). */
  selectTasksByIdempotencyKeys: `
    SELECT ${COLS} FROM tasks WHERE idempotency_key IS NOT NULL AND idempotency_key = ANY($1::text[])`,

  /** One task by id. Params: $1 id. */
  selectTask: `SELECT ${COLS} FROM tasks WHERE id = $1`,

  /** Whole tasks by id (to explain refused batch items). Params: $1 ids (text[]). */
  selectTasks: `SELECT ${COLS} FROM tasks WHERE id = ANY($1::text[])`,

  /** Heads of tasks by id, for checking refused writes. Params: $1 ids (text[]). */
  selectHeads: 'SELECT id, status, version, agent_id, next_attempt_at FROM tasks WHERE id = ANY($1::text[])',

  /**
   * A page of tasks, newest first. Every filter is optional (null = any). Params: $1 beforeSeq (cursor),
   * $2 type, $3 agentId, $4 labels (jsonb object, all must match), $5 limit. The cursor is an index
   * condition (`seq < COALESCE(...)`), so a deep page starts where the last one ended.
   */
  /** The overview's counts by type and status. No params. */
  summaryByTypeAndStatus: 'SELECT type, status, count(*)::int AS count FROM tasks GROUP BY type, status',

  /** Tasks finished since $1: completed, and failed for good. */
  summaryFinishedSince: `
    SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed,
           count(*) FILTER (WHERE status IN ('failed', 'timeout') AND next_attempt_at IS NULL)::int AS failed
    FROM tasks WHERE finished_at >= $1`,

  /** created → completed of the newest completed since $1, at most $2. */
  summaryLatencies: `
    SELECT finished_at - created_at AS ms FROM tasks
    WHERE status = 'completed' AND finished_at >= $1 ORDER BY finished_at DESC LIMIT $2`,

  listTasks: `
    SELECT ${T} FROM tasks t
    WHERE ${LIST_FILTERS}
    ORDER BY t.seq DESC
    LIMIT $5`,

  /**
   * `listTasks` for some statuses: per status, the newest matching rows — through `tasks_status` for
   * every status but completed (that partial index leaves completed tasks out; they are found densely
   * by walking the primary key; it is keyed by NULLIF(status, 'completed') so that no write is planned
   * through it, see migration 0004) — then the newest of those. Params: $1 … $6 as listTasks, $7 statuses
   * (text[]).
   */
  listTasksByStatus: `
    SELECT ${taskColumns('page')} FROM (SELECT DISTINCT unnest($7::text[]) AS status) s
    CROSS JOIN LATERAL (
      (SELECT ${T} FROM tasks t
       WHERE s.status <> 'completed' AND NULLIF(t.status, 'completed') = s.status AND t.status <> 'completed'
         AND ${LIST_FILTERS}
       ORDER BY t.seq DESC
       LIMIT $5)
      UNION ALL
      (SELECT ${T} FROM tasks t
       WHERE s.status = 'completed' AND t.status = 'completed'
         AND ${LIST_FILTERS}
       ORDER BY t.seq DESC
       LIMIT $5)
    ) page
    ORDER BY seq DESC
    LIMIT $5`,

  /**
   * A task's stored history, oldest first, each row with the task's created_at (one row with a null
   * seq when nothing is stored; none when there is no such task). Params: $1 taskId.
   */
  selectEvents: `
    SELECT t.created_at, ${EVENT_COLUMNS.split(', ')
      .map((c) => `e.${c}`)
      .join(', ')}
    FROM tasks t LEFT JOIN task_events e ON e.task_id = t.id
    WHERE t.id = $1 ORDER BY e.seq`,

  /**
   * The stored rows that may hold the history entries (task, seq): the row at seq and the row before it
   * (a claim stored with its start holds both, see `claimStartedRow`); a row may come more than once.
   * Params: $1 task ids (text[]), $2 seqs (integer[]), pairwise.
   */
  selectEventsByRef: `
    SELECT ${EVENT_COLUMNS.split(', ')
      .map((c) => `e.${c}`)
      .join(', ')}
    FROM unnest($1::text[], $2::integer[]) AS r(task_id, seq)
    JOIN task_events e ON e.task_id = r.task_id AND e.seq IN (r.seq - 1, r.seq)
    -- Rows reached through the key's index whatever the statistics say (see completeCtes).
    WHERE e.task_id = ANY($1::text[])`,

  /**
   * Claim up to $3 claimable tasks of the types $2, highest priority first, then oldest, skipping rows
   * another claim has locked, and move them to a new attempt (with $6 start: to running) with their one
   * or two history entries (see `claimCtes`).
   * Params: $1 now, $2 types (text[]), $3 max, $4 agentId, $5 unavailable dependencies (text[]),
   * $6 start (boolean), $7 actor.
   */
  claimTasks: `
    WITH ${CLOCK_CTE}, ${claimCtes(['$2', '$3', '$4', '$5', '$6', '$7'])}
    SELECT ${CLAIMED} FROM upd u ORDER BY u.priority DESC, u.seq`,

  /** claimed → running with a heartbeat lease. Params: $1 now, $2 id, $3 version, $4 agentId, $5 actor. */
  startTask: `
    WITH ${CLOCK_CTE},
    upd AS (
      UPDATE tasks t SET status = 'running', started_at = clock.now, progress_changed_at = clock.now,
        event_count = t.event_count + 1, lease_expires_at = ${leaseDeadlineSql('start', 't', 'clock.now')}
      FROM clock
      WHERE t.id = $2 AND t.version = $3 AND t.agent_id = $4 AND t.status = 'claimed'
      RETURNING ${T}, clock.now AS at
    ),
    ev AS (
      INSERT INTO task_events (${EVENT_COLUMNS})
      SELECT id, event_count, at, 'claimed', 'running', version, attempt, $5::text, 'started', NULL FROM upd
      RETURNING *
    )
    SELECT u.*, ${eventsOf('ev')} FROM upd u`,

  /**
   * Renew leases and record progress for a batch (no task twice), locking the rows in seq order. A
   * running task gets a heartbeat lease; the attempt's first executionDone makes it at least now + grace,
   * later ones keep that lease without renewing the grace; a claimed one keeps its claim lease. Progress, phase and executionDone keep their values when not given.
   * Returns per task written: i, id, the lease, whether progress moved, the status, the stall clock
   * after the beat, the task's stall timeout and the dependencies it requires (for the watchdog).
   * Params: $1 now, $2 JSON array of {i, id, agent_id, version, progress, phase, execution_done, grace_ms},
   * $3 the same ids (text[]).
   */
  recordHeartbeats: `
    WITH ${CLOCK_CTE},
    cur AS (
      SELECT b.i, t.seq, t.status, t.progress, t.phase, t.lease_expires_at, t.started_at,
        t.heartbeat_timeout_ms, t.attempt_deadline_ms,
        t.execution_done AS was_done,
        COALESCE(b.progress, t.progress) AS new_progress, COALESCE(b.phase, t.phase) AS new_phase,
        COALESCE(b.execution_done, t.execution_done) AS new_done, b.grace_ms
      FROM jsonb_to_recordset($2::jsonb) AS b(i integer, id text, agent_id text, version integer,
             progress double precision, phase text, execution_done boolean, grace_ms bigint)
      JOIN tasks t ON t.id = b.id
      -- Rows reached through the id index whatever the statistics say (see completeCtes).
      WHERE t.id = ANY($3::text[])
        AND t.version = b.version AND t.agent_id = b.agent_id AND t.status IN ('claimed', 'running')
      ORDER BY t.seq
      FOR UPDATE OF t
    ),
    calc AS (
      SELECT cur.*, clock.now,
        (cur.new_progress IS DISTINCT FROM cur.progress OR cur.new_phase IS DISTINCT FROM cur.phase) AS progressed,
        CASE WHEN cur.status <> 'running' THEN cur.lease_expires_at
             ELSE GREATEST(${leaseDeadlineSql('heartbeat', 'cur', 'clock.now')},
                           CASE WHEN cur.new_done AND NOT cur.was_done THEN clock.now + cur.grace_ms
                                WHEN cur.new_done THEN cur.lease_expires_at END) END AS new_lease
      FROM cur CROSS JOIN clock
    )
    UPDATE tasks t SET lease_expires_at = c.new_lease, last_heartbeat_at = c.now, progress = c.new_progress,
      phase = c.new_phase, execution_done = c.new_done,
      progress_changed_at = CASE WHEN c.progressed THEN c.now ELSE t.progress_changed_at END
    FROM calc c
    WHERE t.seq = c.seq
    RETURNING c.i, t.id, t.lease_expires_at, c.progressed, t.status, t.progress_changed_at,
      t.stall_timeout_ms, t.requires`,

  /**
   * Save resume state; each of state/session only when its flag is set.
   * Params: $1 id, $2 version, $3 agentId, $4 setState, $5 state (jsonb), $6 setSession, $7 session (jsonb).
   */
  saveCheckpoint: `
    UPDATE tasks SET checkpoint = CASE WHEN $4::boolean THEN $5::jsonb ELSE checkpoint END,
      session = CASE WHEN $6::boolean THEN $7::jsonb ELSE session END
    WHERE id = $1 AND version = $2 AND agent_id = $3 AND status IN ('claimed', 'running')`,

  /**
   * Append log lines to the holder's current attempt, as many as fit under the per-task byte cap (a
   * prefix: the first line that does not fit and all after it are dropped). Seqs continue from the
   * locked task row's log_count. Returns held (0 = refused), accepted and total.
   * Params: $1 now, $2 id, $3 version, $4 agentId, $5 streams (text[]), $6 texts (text[]),
   * $7 byte sizes (integer[]), $8 maxBytesPerTask.
   */
  appendLogs: `
    WITH ${CLOCK_CTE},
    head AS (
      SELECT t.seq, t.attempt, t.log_bytes, t.log_count FROM tasks t
      WHERE t.id = $2 AND t.version = $3 AND t.agent_id = $4 AND t.status IN ('claimed', 'running')
      FOR UPDATE
    ),
    line AS (
      SELECT l.n, l.stream, l.text, sum(l.bytes) OVER (ORDER BY l.n) AS used
      FROM unnest($5::text[], $6::text[], $7::integer[]) WITH ORDINALITY AS l(stream, text, bytes, n)
    ),
    ok AS (SELECT line.* FROM line CROSS JOIN head WHERE head.log_bytes + line.used <= $8::bigint),
    ins AS (
      INSERT INTO task_logs (task_id, seq, attempt, at, stream, text)
      SELECT $2, head.log_count + ok.n, head.attempt, clock.now, ok.stream, ok.text FROM ok, head, clock
    ),
    upd AS (
      UPDATE tasks t SET log_bytes = t.log_bytes + s.bytes, log_count = t.log_count + s.lines
      FROM head, (SELECT count(*)::integer AS lines, COALESCE(max(used), 0) AS bytes FROM ok) s
      WHERE t.seq = head.seq AND s.lines > 0
    )
    SELECT (SELECT count(*) FROM head) AS held, (SELECT count(*) FROM ok) AS accepted,
           (SELECT count(*) FROM line) AS total`,

  /**
   * The line that says a task's log reached its cap, appended once: only while the byte count is
   * within the cap, which it then passes. Params: $1 now, $2 id, $3 version, $4 agentId, $5 the cap,
   * $6 the line's bytes, $7 stream, $8 text.
   */
  appendLogCapNotice: `
    WITH ${CLOCK_CTE},
    upd AS (
      UPDATE tasks t SET log_bytes = GREATEST(t.log_bytes + $6::bigint, $5::bigint + 1), log_count = t.log_count + 1
      WHERE t.id = $2 AND t.version = $3 AND t.agent_id = $4 AND t.log_bytes <= $5::bigint
      RETURNING t.log_count, t.attempt
    )
    INSERT INTO task_logs (task_id, seq, attempt, at, stream, text)
    SELECT $2, upd.log_count, upd.attempt, clock.now, $7, $8 FROM upd, clock`,

  /** Log lines after a seq, oldest first. Params: $1 taskId, $2 afterSeq, $3 limit. */
  selectLogs: `
    SELECT seq, at, attempt, stream, text FROM task_logs
    WHERE task_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,

  /** Record an uploaded result blob. Params: $1 id, $2 version, $3 agentId, $4 resultRef (jsonb). */
  setResultRef: `
    UPDATE tasks SET result_ref = $4::jsonb
    WHERE id = $1 AND version = $2 AND agent_id = $3 AND status IN ('claimed', 'running')`,

  /**
   * running → completed by the holder, for a batch (no task twice; see `completeCtes`).
   * Params: $1 now, $2 … $9 the completions' arrays (i, id, agent_id, version, actor, result, set_ref,
   * result_ref).
   */
  completeTasks: `
    WITH ${CLOCK_CTE}, ${completeCtes(['$2', '$3', '$4', '$5', '$6', '$7', '$8', '$9'])}
    SELECT u.i, ${COMPLETED} FROM cupd u`,

  /**
   * completeTasks($2 … $9), then claimTasks($10 … $15), in ONE statement: one round trip and one
   * commit. The two parts touch disjoint rows (running tasks vs claimable ones), so neither needs to see
   * the other. Returns the completed rows (part 'completed', with i) and the claimed ones (part 'claimed').
   * Params: $1 now, $2 … $9 completions (as completeTasks' $2 … $9), $10 types, $11 max, $12 agentId,
   * $13 unavailable dependencies, $14 start, $15 actor.
   */
  completeAndClaim: `
    WITH ${CLOCK_CTE}, ${completeCtes(['$2', '$3', '$4', '$5', '$6', '$7', '$8', '$9'])},
    ${claimCtes(['$10', '$11', '$12', '$13', '$14', '$15'])}
    SELECT part, i, r FROM (
      SELECT 'completed' AS part, u.i, ${COMPLETED}, u.priority, u.seq FROM cupd u
      UNION ALL
      SELECT 'claimed', NULL, ${CLAIMED}, u.priority, u.seq FROM upd u
    ) x
    ORDER BY part, priority DESC, seq`,

  /**
   * running → failed, scheduling the retry (now + backoff: the task's own, else these) when the error is retryable and attempts are
   * left, else final. Params: $1 now, $2 id, $3 version, $4 agentId, $5 retryable, $6 backoff baseMs,
   * $7 capMs, $8 jitter, $9 error (jsonb), $10 actor.
   */
  failTask: `
    WITH ${CLOCK_CTE},
    cur AS (
      SELECT t.seq, CASE WHEN $5::boolean AND t.attempt < t.max_attempts
                         THEN clock.now + ${taskBackoffSql('t', '$6', '$7', '$8')} END AS next
      FROM tasks t CROSS JOIN clock
      WHERE t.id = $2 AND t.version = $3 AND t.agent_id = $4 AND t.status = 'running'
      FOR UPDATE OF t
    ),
    upd AS (
      UPDATE tasks t SET status = 'failed', error = $9::jsonb, next_attempt_at = cur.next,
        finished_at = CASE WHEN cur.next IS NULL THEN clock.now END, lease_expires_at = NULL,
        event_count = t.event_count + 1
      FROM cur, clock
      WHERE t.seq = cur.seq
      RETURNING ${T}, clock.now AS at
    ),
    ev AS (
      INSERT INTO task_events (${EVENT_COLUMNS})
      SELECT id, event_count, at, 'running', 'failed', version, attempt, $10::text, 'failed',
             jsonb_build_object('error', $9::jsonb, 'nextAttemptAt', next_attempt_at) FROM upd
      RETURNING *
    )
    SELECT u.*, ${eventsOf('ev')} FROM upd u`,
} as const;
