-- 0005_agent_commands: commands for agents (wake, cancel, checkpoint, restart, terminate) wait here
-- until the agent's next heartbeat takes them (the same table as PostgreSQL's, where several
-- coordinators share it).

CREATE TABLE agent_commands (
  seq        INTEGER PRIMARY KEY,
  agent_id   TEXT    NOT NULL,
  type       TEXT    NOT NULL,
  -- The task the command is about (cancel), if any.
  task_id    TEXT,
  command    TEXT    NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE INDEX agent_commands_agent ON agent_commands (agent_id, seq);
-- A command about a task is queued once until taken.
CREATE UNIQUE INDEX agent_commands_once ON agent_commands (agent_id, type, task_id) WHERE task_id IS NOT NULL;
