-- 0001_init: tasks, their history and logs, and agents.
-- Times are epoch milliseconds from the store's clock; JSON columns hold JSON text.
-- PostgreSQL follows the same shape (bigint identity for seq, jsonb for JSON, a STORED generated
-- available_at, the same partial indexes).

CREATE TABLE tasks (
  -- Insertion order: claims take the oldest first and list cursors page on it. The rowid, so the
  -- claim index and cursors need no extra lookup.
  seq                 INTEGER PRIMARY KEY,
  id                  TEXT    NOT NULL UNIQUE,
  type                TEXT    NOT NULL,
  status              TEXT    NOT NULL CHECK (status IN
                        ('created', 'claimed', 'running', 'completed', 'failed', 'timeout', 'cancelled')),
  payload             TEXT    NOT NULL,
  idempotency_key     TEXT    UNIQUE,
  priority            INTEGER NOT NULL,
  run_at              INTEGER NOT NULL,
  max_attempts        INTEGER NOT NULL CHECK (max_attempts >= 1),
  attempt             INTEGER NOT NULL DEFAULT 0,
  -- The fencing token: grows on every claim.
  version             INTEGER NOT NULL DEFAULT 0,
  -- The holder of the current (or last) attempt.
  agent_id            TEXT,
  resumable           INTEGER NOT NULL,
  requires            TEXT    NOT NULL,
  labels              TEXT    NOT NULL,
  timing              TEXT    NOT NULL,
  progress            REAL,
  phase               TEXT,
  execution_done      INTEGER NOT NULL DEFAULT 0,
  checkpoint          TEXT,
  session             TEXT,
  result              TEXT,
  result_ref          TEXT,
  error               TEXT,
  -- Bytes of log text stored for this task (the per-task cap counts these).
  log_bytes           INTEGER NOT NULL DEFAULT 0,
  -- History entries so far (creation is 1): each write that appends entries adds their number in
  -- the same statement, so the next entry's seq is known without reading task_events.
  event_count         INTEGER NOT NULL DEFAULT 1,
  created_at          INTEGER NOT NULL,
  claimed_at          INTEGER,
  started_at          INTEGER,
  last_heartbeat_at   INTEGER,
  -- Not null exactly while the task is claimed or running.
  lease_expires_at    INTEGER,
  -- Not null on a failed/timeout task that will be retried; null there means final.
  next_attempt_at     INTEGER,
  finished_at         INTEGER,
  -- Last time progress or phase changed (stall detection).
  progress_changed_at INTEGER,
  -- When the task may be claimed; null when it cannot be. Derived, so no write can forget it.
  available_at        INTEGER GENERATED ALWAYS AS (
                        CASE status
                          WHEN 'created' THEN run_at
                          WHEN 'failed'  THEN next_attempt_at
                          WHEN 'timeout' THEN next_attempt_at
                        END) VIRTUAL
);

-- Claims: per type, highest priority first, then oldest; available_at covered for the time filter.
CREATE INDEX tasks_claim ON tasks (type, priority DESC, seq, available_at) WHERE available_at IS NOT NULL;
-- nextClaimableAt: the earliest future available_at.
CREATE INDEX tasks_available ON tasks (available_at, type) WHERE available_at IS NOT NULL;
-- The tasks an agent holds (heartbeats leave it alone: neither column nor membership changes).
CREATE INDEX tasks_held ON tasks (agent_id) WHERE lease_expires_at IS NOT NULL;
-- Leases in deadline order (activeLeases, the safety sweep).
CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

-- The audit trail: one row per transition (and per annotation such as a manual retry, where
-- from_status = to_status). Appended in the same transaction as the write it records.
CREATE TABLE task_events (
  task_id     TEXT    NOT NULL REFERENCES tasks (id),
  seq         INTEGER NOT NULL,
  at          INTEGER NOT NULL,
  from_status TEXT,
  to_status   TEXT    NOT NULL,
  version     INTEGER NOT NULL,
  attempt     INTEGER NOT NULL,
  actor       TEXT    NOT NULL,
  reason      TEXT    NOT NULL,
  details     TEXT,
  PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;

-- Log lines per task, numbered per task, tagged with the attempt that wrote them.
CREATE TABLE task_logs (
  task_id TEXT    NOT NULL REFERENCES tasks (id),
  seq     INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  at      INTEGER NOT NULL,
  stream  TEXT    NOT NULL,
  text    TEXT    NOT NULL,
  PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;

CREATE TABLE agents (
  seq               INTEGER PRIMARY KEY,
  id                TEXT    NOT NULL UNIQUE,
  agent_type        TEXT    NOT NULL,
  name              TEXT    NOT NULL,
  host              TEXT,
  pid               INTEGER,
  task_types        TEXT    NOT NULL,
  labels            TEXT    NOT NULL,
  -- sha256 (hex) of the agent's bearer token.
  token_hash        TEXT    NOT NULL UNIQUE,
  status            TEXT    NOT NULL,
  registered_at     INTEGER NOT NULL,
  last_heartbeat_at INTEGER,
  last_poll_at      INTEGER,
  last_poll_types   TEXT    NOT NULL DEFAULT '[]',
  metrics           TEXT
);
