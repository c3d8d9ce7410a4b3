-- 0009_watchdog: agents become slots with incarnations (a key re-registered → the same id, the next
-- incarnation), get leases of their own, and keep what the watchdog's detectors need (docs/design.md §6):
-- the reported status and since when, progress and its stall clock, a bounded ring of metric samples,
-- the gaps between recent heartbeats, and the kinds of their open conditions. `status` gives way to
-- `lifecycle` (active / left / terminated) and `reported_status`: the status clients see is derived.
-- The same shape as SQLite's 0009, in PostgreSQL types.

ALTER TABLE agents
  ADD COLUMN agent_key             text,
  ADD COLUMN incarnation           integer NOT NULL DEFAULT 1,
  ADD COLUMN started_at            bigint  NOT NULL DEFAULT 0,
  ADD COLUMN requires              jsonb   NOT NULL DEFAULT '[]',
  ADD COLUMN supervisor_id         text,
  ADD COLUMN policy                text    NOT NULL DEFAULT 'default',
  -- The agent's lease shard, shardOf(id) over LEASE_SHARD_COUNT (lease-shards.ts), fixed at registration.
  ADD COLUMN shard                 integer NOT NULL DEFAULT 0,
  ADD COLUMN lifecycle             text    NOT NULL DEFAULT 'active'
                                     CHECK (lifecycle IN ('active', 'left', 'terminated')),
  ADD COLUMN ended_at              bigint,
  ADD COLUMN reported_status       text    NOT NULL DEFAULT 'idle',
  ADD COLUMN reported_status_since bigint  NOT NULL DEFAULT 0,
  ADD COLUMN status_message        text,
  -- Null when the agent is not watched: lost, left or terminated.
  ADD COLUMN lease_expires_at      bigint,
  ADD COLUMN heartbeat_interval_ms bigint  NOT NULL DEFAULT 5000,
  ADD COLUMN heartbeat_timeout_ms  bigint  NOT NULL DEFAULT 15000,
  -- Kinds of the open conditions (`kind` or `kind taskId`) in opening order, written in the same
  -- transaction as the conditions, under the agent row's lock.
  ADD COLUMN open_conditions       jsonb   NOT NULL DEFAULT '[]',
  ADD COLUMN metadata              jsonb,
  ADD COLUMN progress              jsonb,
  ADD COLUMN phase                 text,
  ADD COLUMN progress_changed_at   bigint,
  -- [[at, rssBytes, cpuPercent, iterationMs], ...] oldest first, bounded.
  ADD COLUMN samples               jsonb   NOT NULL DEFAULT '[]',
  ADD COLUMN gaps                  jsonb   NOT NULL DEFAULT '[]';

-- shardOf (lease-shards.ts) for the agents registered before: FNV-1a (32-bit) over the id's UTF-16
-- code units, modulo 64. Temporary: new agents get their shard from the same function in JS.
CREATE FUNCTION pg_temp.rouse_shard_of(id text) RETURNS integer LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  h bigint := 2166136261;
  cp integer;
  unit integer;
BEGIN
  FOR i IN 1 .. length(id) LOOP
    cp := ascii(substr(id, i, 1));
    FOREACH unit IN ARRAY CASE WHEN cp > 65535
        THEN ARRAY[55296 + ((cp - 65536) >> 10), 56320 + ((cp - 65536) & 1023)]
        ELSE ARRAY[cp] END LOOP
      h := ((h # unit) * 16777619) & 4294967295;
    END LOOP;
  END LOOP;
  RETURN h % 64;
END
$$;

-- Agents registered before: what they reported stays their reported status, those that left stay
-- left, and the others get a lease from their last sign of life.
UPDATE agents SET
  shard = pg_temp.rouse_shard_of(id),
  started_at = registered_at,
  reported_status_since = registered_at,
  lifecycle = CASE WHEN status = 'left' THEN 'left' ELSE 'active' END,
  ended_at = CASE WHEN status = 'left' THEN COALESCE(last_heartbeat_at, registered_at) END,
  reported_status = CASE WHEN status IN ('idle', 'running', 'error', 'terminating') THEN status ELSE 'idle' END,
  lease_expires_at = CASE WHEN status = 'left' THEN NULL ELSE COALESCE(last_heartbeat_at, registered_at) + 15000 END;
DROP FUNCTION pg_temp.rouse_shard_of(text);
ALTER TABLE agents DROP COLUMN status;

CREATE UNIQUE INDEX agents_key ON agents (agent_type, agent_key) WHERE agent_key IS NOT NULL;
-- A shard's agent leases in deadline order (the shard owner's lookahead).
CREATE INDEX agents_shard_leases ON agents (shard, lease_expires_at) WHERE lease_expires_at IS NOT NULL;

-- Conditions the detectors opened on agents; closed ones stay as history. `task_id` is '' when the
-- condition is about the agent itself. Every write of an agent's conditions first locks its agents
-- row, so `open_conditions` follows them exactly.
CREATE TABLE agent_conditions (
  -- Grows with every condition opened: the history's order.
  seq          bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agent_id     text    NOT NULL,
  incarnation  integer NOT NULL,
  agent_type   text    NOT NULL,
  condition    text    NOT NULL,
  task_id      text    NOT NULL DEFAULT '',
  since        bigint  NOT NULL,
  evidence     jsonb   NOT NULL,
  opened_by    text    NOT NULL,
  opened_at    bigint  NOT NULL,
  closed_at    bigint,
  close_reason text
);
-- At most one open condition per agent, kind and task: two coordinators record it once.
CREATE UNIQUE INDEX agent_conditions_open ON agent_conditions (agent_id, condition, task_id) WHERE closed_at IS NULL;
CREATE INDEX agent_conditions_agent ON agent_conditions (agent_id, seq);

-- Per agent type baselines (iteration time, heartbeat gaps), one histogram per coordinator; readers
-- merge them.
CREATE TABLE agent_type_baselines (
  agent_type     text   NOT NULL,
  metric         text   NOT NULL,
  coordinator_id text   NOT NULL,
  histogram      jsonb  NOT NULL,
  updated_at     bigint NOT NULL,
  PRIMARY KEY (agent_type, metric, coordinator_id)
);
