-- 0016_timing_columns: a task's resolved timing as columns instead of one jsonb object. The object
-- repeated its six key names in every version of every task row (192 of a row's 560 bytes), and each
-- task's row is written three times (created; claimed and started; completed), so it was a third of
-- the table and of the shared buffers it fills. The columns take about 40 bytes.
ALTER TABLE tasks
  ADD COLUMN heartbeat_interval_ms bigint,
  ADD COLUMN heartbeat_timeout_ms  bigint,
  ADD COLUMN claim_timeout_ms      bigint,
  ADD COLUMN execution_timeout_ms  bigint,
  ADD COLUMN attempt_deadline_ms   bigint,
  ADD COLUMN stall_timeout_ms      bigint,
  -- The task's own retry backoff (its type's), {baseMs, capMs, jitter}; null: the coordinator's.
  ADD COLUMN backoff               jsonb,
  ALTER COLUMN timing DROP NOT NULL;

-- The rewritten rows drop the object at once (a dropped column stays in the rows written before).
UPDATE tasks SET
  heartbeat_interval_ms = (timing->>'heartbeatIntervalMs')::bigint,
  heartbeat_timeout_ms  = (timing->>'heartbeatTimeoutMs')::bigint,
  claim_timeout_ms      = (timing->>'claimTimeoutMs')::bigint,
  execution_timeout_ms  = (timing->>'executionTimeoutMs')::bigint,
  attempt_deadline_ms   = (timing->>'attemptDeadlineMs')::bigint,
  stall_timeout_ms      = (timing->>'stallTimeoutMs')::bigint,
  backoff               = timing->'backoff',
  timing                = NULL;

ALTER TABLE tasks
  ALTER COLUMN heartbeat_interval_ms SET NOT NULL,
  ALTER COLUMN heartbeat_timeout_ms  SET NOT NULL,
  ALTER COLUMN claim_timeout_ms      SET NOT NULL,
  ALTER COLUMN stall_timeout_ms      SET NOT NULL,
  DROP COLUMN timing;
