-- 0019_tasks_rebuild: the tasks table copied into a new layout (SQLite changes a column's
-- constraints only that way). The migration runner turns foreign keys off for the copy and checks
-- every reference before it commits.
--
-- 1. A task's resolved timing as columns instead of one JSON object. The object repeated its six key
--    names in every task row (about 170 of a row's 450 bytes), so fewer rows fit a page and every
--    claim, heartbeat and completion wrote and read more pages; the columns take about 30 bytes.
-- 2. The idempotency key's uniqueness as a partial index. A column's UNIQUE indexes every row, the
--    NULL keys of tasks created without one included: one more B-tree page to write in every create.
CREATE TABLE tasks_new (
  -- Insertion order: claims take the oldest first and list cursors page on it. The rowid, so the
  -- claim index and cursors need no extra lookup.
  seq                   INTEGER PRIMARY KEY,
  id                    TEXT    NOT NULL UNIQUE,
  type                  TEXT    NOT NULL,
  status                TEXT    NOT NULL CHECK (status IN
                          ('created', 'claimed', 'running', 'completed', 'failed', 'timeout', 'cancelled')),
  payload               TEXT    NOT NULL,
  -- Unique where set: the partial index tasks_idempotency_key.
  idempotency_key       TEXT,
  priority              INTEGER NOT NULL,
  run_at                INTEGER NOT NULL,
  max_attempts          INTEGER NOT NULL CHECK (max_attempts >= 1),
  attempt               INTEGER NOT NULL DEFAULT 0,
  -- The fencing token: grows on every claim.
  version               INTEGER NOT NULL DEFAULT 0,
  -- The holder of the current (or last) attempt.
  agent_id              TEXT,
  resumable             INTEGER NOT NULL,
  requires              TEXT    NOT NULL,
  labels                TEXT    NOT NULL,
  -- The lease shard (see lease-shards.ts).
  shard                 INTEGER NOT NULL DEFAULT 0,
  -- The resolved timing, in milliseconds; the two optional limits are null when unset.
  heartbeat_interval_ms INTEGER NOT NULL,
  heartbeat_timeout_ms  INTEGER NOT NULL,
  claim_timeout_ms      INTEGER NOT NULL,
  execution_timeout_ms  INTEGER,
  attempt_deadline_ms   INTEGER,
  stall_timeout_ms      INTEGER NOT NULL,
  -- The task's own retry backoff (its type's), JSON {baseMs, capMs, jitter}; null: the coordinator's.
  backoff               TEXT,
  progress              REAL,
  phase                 TEXT,
  execution_done        INTEGER NOT NULL DEFAULT 0,
  checkpoint            TEXT,
  session               TEXT,
  result                TEXT,
  result_ref            TEXT,
  error                 TEXT,
  -- Bytes of log text stored for this task (the per-task cap counts these).
  log_bytes             INTEGER NOT NULL DEFAULT 0,
  -- History entries so far (creation is 1): each write that appends entries adds their number in
  -- the same statement, so the next entry's seq is known without reading task_events.
  event_count           INTEGER NOT NULL DEFAULT 1,
  created_at            INTEGER NOT NULL,
  claimed_at            INTEGER,
  started_at            INTEGER,
  last_heartbeat_at     INTEGER,
  -- Not null exactly while the task is claimed or running.
  lease_expires_at      INTEGER,
  -- Not null on a failed/timeout task that will be retried; null there means final.
  next_attempt_at       INTEGER,
  finished_at           INTEGER,
  -- Last time progress or phase changed (stall detection).
  progress_changed_at   INTEGER,
  -- When the task may be claimed; null when it cannot be. Derived, so no write can forget it.
  available_at          INTEGER GENERATED ALWAYS AS (
                          CASE status
                            WHEN 'created' THEN run_at
                            WHEN 'failed'  THEN next_attempt_at
                            WHEN 'timeout' THEN next_attempt_at
                          END) VIRTUAL
);

INSERT INTO tasks_new (
  seq, id, type, status, payload, idempotency_key, priority, run_at, max_attempts, attempt, version,
  agent_id, resumable, requires, labels, shard,
  heartbeat_interval_ms, heartbeat_timeout_ms, claim_timeout_ms, execution_timeout_ms, attempt_deadline_ms,
  stall_timeout_ms, backoff,
  progress, phase, execution_done, checkpoint, session, result, result_ref, error, log_bytes, event_count,
  created_at, claimed_at, started_at, last_heartbeat_at, lease_expires_at, next_attempt_at, finished_at,
  progress_changed_at)
SELECT
  seq, id, type, status, payload, idempotency_key, priority, run_at, max_attempts, attempt, version,
  agent_id, resumable, requires, labels, shard,
  json_extract(timing, '$.heartbeatIntervalMs'), json_extract(timing, '$.heartbeatTimeoutMs'),
  json_extract(timing, '$.claimTimeoutMs'), json_extract(timing, '$.executionTimeoutMs'),
  json_extract(timing, '$.attemptDeadlineMs'), json_extract(timing, '$.stallTimeoutMs'),
  json_extract(timing, '$.backoff'),
  progress, phase, execution_done, checkpoint, session, result, result_ref, error, log_bytes, event_count,
  created_at, claimed_at, started_at, last_heartbeat_at, lease_expires_at, next_attempt_at, finished_at,
  progress_changed_at
FROM tasks;

DROP TABLE tasks;
ALTER TABLE tasks_new RENAME TO tasks;

-- The indexes as they were (0001, 0004 and 0018 made them), and the idempotency key’s.
CREATE INDEX tasks_claim ON tasks (type, priority DESC, seq, available_at) WHERE available_at IS NOT NULL;
CREATE INDEX tasks_held ON tasks (agent_id) WHERE lease_expires_at IS NOT NULL;
CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
CREATE INDEX tasks_status ON tasks (status, seq) WHERE status <> 'completed';
CREATE INDEX tasks_deferred ON tasks (available_at, type) WHERE available_at > created_at;
CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (idempotency_key) WHERE idempotency_key IS NOT NULL;
