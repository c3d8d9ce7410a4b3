-- A task's resolved timing as columns instead of one JSON object. The object repeated its six key
-- names in every task row (about 170 of a row's 450 bytes), so fewer rows fit a page and every
-- claim, heartbeat and completion wrote and read more pages; the columns take about 30 bytes.
--
-- The columns are NOT NULL where the field always has a value; SQLite adds such a column only with a
-- default, which every row gets here from its JSON and every insert names explicitly.
ALTER TABLE tasks ADD COLUMN heartbeat_interval_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN heartbeat_timeout_ms  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN claim_timeout_ms      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN execution_timeout_ms  INTEGER;
ALTER TABLE tasks ADD COLUMN attempt_deadline_ms   INTEGER;
ALTER TABLE tasks ADD COLUMN stall_timeout_ms      INTEGER NOT NULL DEFAULT 0;
-- The task's own retry backoff (its type's), JSON {baseMs, capMs, jitter}; null: the coordinator's.
ALTER TABLE tasks ADD COLUMN backoff               TEXT;

UPDATE tasks SET
  heartbeat_interval_ms = json_extract(timing, '$.heartbeatIntervalMs'),
  heartbeat_timeout_ms  = json_extract(timing, '$.heartbeatTimeoutMs'),
  claim_timeout_ms      = json_extract(timing, '$.claimTimeoutMs'),
  execution_timeout_ms  = json_extract(timing, '$.executionTimeoutMs'),
  attempt_deadline_ms   = json_extract(timing, '$.attemptDeadlineMs'),
  stall_timeout_ms      = json_extract(timing, '$.stallTimeoutMs'),
  backoff               = json_extract(timing, '$.backoff');

ALTER TABLE tasks DROP COLUMN timing;
