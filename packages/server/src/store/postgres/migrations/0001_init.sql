-- 0001_init: tasks, their history and logs, agents, and lease shards (PostgreSQL).
-- The same shape as SQLite's 0001 + 0002. Times are epoch milliseconds (bigint) from the store's
-- clock: the database's now() in production, an injected clock under test. JSON columns are jsonb.
-- Runs with search_path set to the Rouse schema (migrate.ts), so names are unqualified.

CREATE TABLE tasks (
  -- Insertion order: claims take the oldest first and list cursors page on it.
  seq                 bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id                  text    NOT NULL UNIQUE,
  type                text    NOT NULL,
  status              text    NOT NULL CHECK (status IN
                        ('created', 'claimed', 'running', 'completed', 'failed', 'timeout', 'cancelled')),
  payload             jsonb   NOT NULL,
  idempotency_key     text,
  priority            integer NOT NULL,
  run_at              bigint  NOT NULL,
  max_attempts        integer NOT NULL CHECK (max_attempts >= 1),
  attempt             integer NOT NULL DEFAULT 0,
  -- The fencing token: grows on every claim.
  version             integer NOT NULL DEFAULT 0,
  -- The holder of the current (or last) attempt.
  agent_id            text,
  resumable           boolean NOT NULL,
  -- A JSON array of dependency names (claims skip tasks requiring an unavailable one: `?|`).
  requires            jsonb   NOT NULL,
  labels              jsonb   NOT NULL,
  timing              jsonb   NOT NULL,
  progress            double precision,
  phase               text,
  execution_done      boolean NOT NULL DEFAULT false,
  checkpoint          jsonb,
  session             jsonb,
  result              jsonb,
  result_ref          jsonb,
  error               jsonb,
  -- Bytes of log text stored for this task (the per-task cap counts these).
  log_bytes           bigint  NOT NULL DEFAULT 0,
  -- Log lines so far: the next line's seq is known from the locked task row, never from max(seq).
  log_count           integer NOT NULL DEFAULT 0,
  -- History entries so far (creation is 1): each write that appends entries adds their number in
  -- the same statement, so the next entry's seq is known without reading task_events.
  event_count         integer NOT NULL DEFAULT 1,
  created_at          bigint  NOT NULL,
  claimed_at          bigint,
  started_at          bigint,
  last_heartbeat_at   bigint,
  -- Not null exactly while the task is claimed or running.
  lease_expires_at    bigint,
  -- Not null on a failed/timeout task that will be retried; null there means final.
  next_attempt_at     bigint,
  finished_at         bigint,
  -- Last time progress or phase changed (stall detection).
  progress_changed_at bigint,
  -- The task's lease shard, shardOf(id) over LEASE_SHARD_COUNT (lease-shards.ts), fixed at creation.
  shard               integer NOT NULL,
  -- When the task may be claimed; null when it cannot be. Derived, so no write can forget it.
  available_at        bigint GENERATED ALWAYS AS (
                        CASE status
                          WHEN 'created' THEN run_at
                          WHEN 'failed'  THEN next_attempt_at
                          WHEN 'timeout' THEN next_attempt_at
                        END) STORED
);

-- Idempotent creates. Partial: most tasks have no key, and every update that is not HOT (most are:
-- they move a task between the partial indexes below) would otherwise add an entry here too.
CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Claims: per type, highest priority first, then oldest; available_at covered for the time filter.
CREATE INDEX tasks_claim ON tasks (type, priority DESC, seq) INCLUDE (available_at)
  WHERE available_at IS NOT NULL;
-- nextClaimableAt: the earliest future available_at.
CREATE INDEX tasks_available ON tasks (available_at, type) WHERE available_at IS NOT NULL;
-- The tasks an agent holds.
CREATE INDEX tasks_held ON tasks (agent_id) WHERE lease_expires_at IS NOT NULL;
-- A shard's held leases in deadline order (the shard owner's timers and sweep; without a shard
-- filter the same partial index is scanned whole: it holds only held tasks).
CREATE INDEX tasks_shard_leases ON tasks (shard, lease_expires_at) WHERE lease_expires_at IS NOT NULL;

-- The audit trail: one row per transition (and per annotation such as a manual retry, where
-- from_status = to_status), appended by the same statement as the write it records. No foreign key:
-- every row is written together with its task, and the check would lock the task row once more.
CREATE TABLE task_events (
  task_id     text    NOT NULL,
  seq         integer NOT NULL,
  at          bigint  NOT NULL,
  from_status text,
  to_status   text    NOT NULL,
  version     integer NOT NULL,
  attempt     integer NOT NULL,
  actor       text    NOT NULL,
  reason      text    NOT NULL,
  details     jsonb,
  PRIMARY KEY (task_id, seq)
);

-- Log lines per task, numbered per task, tagged with the attempt that wrote them.
CREATE TABLE task_logs (
  task_id text    NOT NULL,
  seq     integer NOT NULL,
  attempt integer NOT NULL,
  at      bigint  NOT NULL,
  stream  text    NOT NULL,
  text    text    NOT NULL,
  PRIMARY KEY (task_id, seq)
);

CREATE TABLE agents (
  seq               bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id                text    NOT NULL UNIQUE,
  agent_type        text    NOT NULL,
  name              text    NOT NULL,
  host              text,
  pid               integer,
  task_types        jsonb   NOT NULL,
  labels            jsonb   NOT NULL,
  -- sha256 (hex) of the agent's bearer token.
  token_hash        text    NOT NULL UNIQUE,
  status            text    NOT NULL,
  registered_at     bigint  NOT NULL,
  last_heartbeat_at bigint,
  last_poll_at      bigint,
  last_poll_types   jsonb   NOT NULL DEFAULT '[]',
  metrics           jsonb
);

-- Who holds each lease shard, until when (store clock), and how often it changed hands.
CREATE TABLE shard_leases (
  shard      integer PRIMARY KEY,
  owner_id   text    NOT NULL,
  -- Grows every time the shard changes hands.
  epoch      bigint  NOT NULL,
  expires_at bigint  NOT NULL
);
