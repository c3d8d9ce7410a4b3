-- Effect keys: a side effect inside a task that must happen once across its attempts. A row is
-- 'running' while one attempt's claim holds it (until claim_expires_at), then 'done' with what the
-- effect returned (JSON text). The row is deleted once expires_at has passed.
CREATE TABLE task_effects (
  task_id          TEXT    NOT NULL,
  effect_key       TEXT    NOT NULL,
  state            TEXT    NOT NULL,
  claim_id         TEXT    NOT NULL,
  agent_id         TEXT    NOT NULL,
  claim_expires_at INTEGER NOT NULL,
  result           TEXT,
  created_at       INTEGER NOT NULL,
  done_at          INTEGER,
  expires_at       INTEGER NOT NULL,
  PRIMARY KEY (task_id, effect_key)
);
CREATE INDEX task_effects_expiry ON task_effects (expires_at);
