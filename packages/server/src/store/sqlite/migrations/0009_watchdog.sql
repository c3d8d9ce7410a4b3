-- 0009_watchdog: agents become slots with incarnations (a key re-registered → the same id, the next
-- incarnation), get leases of their own, and keep what the watchdog's detectors need (docs/design.md §6):
-- the reported status and since when, progress and its stall clock, a bounded ring of metric samples,
-- the gaps between recent heartbeats, and the kinds of their open conditions. `status` gives way to
-- `lifecycle` (active / left / terminated) and `reported_status`: the status clients see is derived.

ALTER TABLE agents ADD COLUMN agent_key TEXT;
ALTER TABLE agents ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 1;
ALTER TABLE agents ADD COLUMN started_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN requires TEXT NOT NULL DEFAULT '[]';
ALTER TABLE agents ADD COLUMN supervisor_id TEXT;
ALTER TABLE agents ADD COLUMN policy TEXT NOT NULL DEFAULT 'default';
ALTER TABLE agents ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN lifecycle TEXT NOT NULL DEFAULT 'active';
ALTER TABLE agents ADD COLUMN ended_at INTEGER;
ALTER TABLE agents ADD COLUMN reported_status TEXT NOT NULL DEFAULT 'idle';
ALTER TABLE agents ADD COLUMN reported_status_since INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN status_message TEXT;
ALTER TABLE agents ADD COLUMN lease_expires_at INTEGER;
ALTER TABLE agents ADD COLUMN heartbeat_interval_ms INTEGER NOT NULL DEFAULT 5000;
ALTER TABLE agents ADD COLUMN heartbeat_timeout_ms INTEGER NOT NULL DEFAULT 15000;
-- Kinds of the open conditions (`kind` or `kind taskId`), kept with the conditions in one write.
ALTER TABLE agents ADD COLUMN open_conditions TEXT NOT NULL DEFAULT '[]';
ALTER TABLE agents ADD COLUMN metadata TEXT;
ALTER TABLE agents ADD COLUMN progress TEXT;
ALTER TABLE agents ADD COLUMN phase TEXT;
ALTER TABLE agents ADD COLUMN progress_changed_at INTEGER;
-- [[at, rssBytes, cpuPercent, iterationMs], ...] oldest first, bounded.
ALTER TABLE agents ADD COLUMN samples TEXT NOT NULL DEFAULT '[]';
ALTER TABLE agents ADD COLUMN gaps TEXT NOT NULL DEFAULT '[]';

-- Agents registered before: what they reported stays their reported status, those that left stay
-- left, and the others get a lease from their last sign of life.
UPDATE agents SET
  shard = rouse_shard_of(id),
  started_at = registered_at,
  reported_status_since = registered_at,
  lifecycle = CASE WHEN status = 'left' THEN 'left' ELSE 'active' END,
  ended_at = CASE WHEN status = 'left' THEN COALESCE(last_heartbeat_at, registered_at) END,
  reported_status = CASE WHEN status IN ('idle', 'running', 'error', 'terminating') THEN status ELSE 'idle' END,
  lease_expires_at = CASE WHEN status = 'left' THEN NULL ELSE COALESCE(last_heartbeat_at, registered_at) + 15000 END;
ALTER TABLE agents DROP COLUMN status;

CREATE UNIQUE INDEX agents_key ON agents (agent_type, agent_key) WHERE agent_key IS NOT NULL;
-- A shard's agent leases in deadline order (the shard owner's lookahead).
CREATE INDEX agents_shard_leases ON agents (shard, lease_expires_at) WHERE lease_expires_at IS NOT NULL;

-- Conditions the detectors opened on agents; closed ones stay as history. `task_id` is '' when the
-- condition is about the agent itself.
CREATE TABLE agent_conditions (
  seq          INTEGER PRIMARY KEY,
  agent_id     TEXT    NOT NULL,
  incarnation  INTEGER NOT NULL,
  agent_type   TEXT    NOT NULL,
  condition    TEXT    NOT NULL,
  task_id      TEXT    NOT NULL DEFAULT '',
  since        INTEGER NOT NULL,
  evidence     TEXT    NOT NULL,
  opened_by    TEXT    NOT NULL,
  opened_at    INTEGER NOT NULL,
  closed_at    INTEGER,
  close_reason TEXT
);
-- At most one open condition per agent, kind and task: two coordinators record it once.
CREATE UNIQUE INDEX agent_conditions_open ON agent_conditions (agent_id, condition, task_id) WHERE closed_at IS NULL;
CREATE INDEX agent_conditions_agent ON agent_conditions (agent_id, seq);

-- Per agent type baselines (iteration time, heartbeat gaps), one histogram per coordinator; readers
-- merge them.
CREATE TABLE agent_type_baselines (
  agent_type     TEXT    NOT NULL,
  metric         TEXT    NOT NULL,
  coordinator_id TEXT    NOT NULL,
  histogram      TEXT    NOT NULL,
  updated_at     INTEGER NOT NULL,
  PRIMARY KEY (agent_type, metric, coordinator_id)
);
