-- 0011_interventions: the steps the recovery ladder (or a person) takes on an agent. At most one
-- open ('pending' or 'held') per agent, condition and task ('' = none): opening one is a conditional
-- write, so two coordinators never act on the same condition at once.

CREATE TABLE interventions (
  seq            bigserial PRIMARY KEY,
  id             text    NOT NULL UNIQUE,
  agent_id       text    NOT NULL,
  incarnation    bigint  NOT NULL,
  task_id        text    NOT NULL,
  condition      text    NOT NULL,
  action         text    NOT NULL,
  rung           bigint,
  attempt        bigint  NOT NULL,
  state          text    NOT NULL,
  reason         text    NOT NULL,
  evidence       jsonb   NOT NULL,
  actor          text    NOT NULL,
  coordinator_id text,
  command_id     text,
  shard_epoch    bigint,
  started_at     bigint  NOT NULL,
  ended_at       bigint
);
CREATE UNIQUE INDEX interventions_open ON interventions (agent_id, condition, task_id)
  WHERE state IN ('pending', 'held');
CREATE INDEX interventions_agent ON interventions (agent_id, seq);
CREATE INDEX interventions_task ON interventions (task_id, seq) WHERE task_id <> '';
CREATE INDEX interventions_command ON interventions (command_id) WHERE command_id IS NOT NULL;
