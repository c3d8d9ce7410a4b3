-- 0005_agent_commands: commands for agents (wake, cancel, checkpoint, restart, terminate) wait here
-- until the agent's next heartbeat takes them, so the command reaches the agent whichever coordinator
-- queued it and whichever one its heartbeat lands on. Taking is a DELETE ... RETURNING: each command
-- is delivered once.

CREATE TABLE agent_commands (
  seq        bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agent_id   text    NOT NULL,
  type       text    NOT NULL,
  -- The task the command is about (cancel), if any.
  task_id    text,
  command    jsonb   NOT NULL,
  created_at bigint  NOT NULL
);

CREATE INDEX agent_commands_agent ON agent_commands (agent_id, seq);
-- A command about a task is queued once until taken.
CREATE UNIQUE INDEX agent_commands_once ON agent_commands (agent_id, type, task_id) WHERE task_id IS NOT NULL;
