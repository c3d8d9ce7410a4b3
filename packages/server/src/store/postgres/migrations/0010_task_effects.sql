-- 0010_task_effects: effect keys, a side effect inside a task that must happen once across its
-- attempts. A row is 'running' while one attempt's claim holds it (until claim_expires_at), then
-- 'done' with what the effect returned. The row is deleted once expires_at has passed.

CREATE TABLE task_effects (
  task_id          text   NOT NULL,
  effect_key       text   NOT NULL,
  state            text   NOT NULL,
  claim_id         text   NOT NULL,
  agent_id         text   NOT NULL,
  claim_expires_at bigint NOT NULL,
  result           jsonb,
  created_at       bigint NOT NULL,
  done_at          bigint,
  expires_at       bigint NOT NULL,
  PRIMARY KEY (task_id, effect_key)
);
CREATE INDEX task_effects_expiry ON task_effects (expires_at);
