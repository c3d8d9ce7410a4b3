-- Interventions: the steps the recovery ladder (or a person) takes on an agent. At most one open
-- ('pending' or 'held') per agent, condition and task ('' = none): opening one is a conditional write.
CREATE TABLE interventions (
  seq            INTEGER PRIMARY KEY,
  id             TEXT    NOT NULL UNIQUE,
  agent_id       TEXT    NOT NULL,
  incarnation    INTEGER NOT NULL,
  task_id        TEXT    NOT NULL,
  condition      TEXT    NOT NULL,
  action         TEXT    NOT NULL,
  rung           INTEGER,
  attempt        INTEGER NOT NULL,
  state          TEXT    NOT NULL,
  reason         TEXT    NOT NULL,
  evidence       TEXT    NOT NULL,
  actor          TEXT    NOT NULL,
  coordinator_id TEXT,
  command_id     TEXT,
  shard_epoch    INTEGER,
  started_at     INTEGER NOT NULL,
  ended_at       INTEGER
);
CREATE UNIQUE INDEX interventions_open ON interventions (agent_id, condition, task_id)
  WHERE state IN ('pending', 'held');
CREATE INDEX interventions_agent ON interventions (agent_id, seq);
CREATE INDEX interventions_task ON interventions (task_id, seq) WHERE task_id <> '';
CREATE INDEX interventions_command ON interventions (command_id) WHERE command_id IS NOT NULL;
