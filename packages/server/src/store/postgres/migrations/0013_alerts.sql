-- 0013_alerts: one firing alert per (agent type, condition) group — raising into a group is a
-- conditional write (an upsert on the partial unique index), so two coordinators raising for one group
-- make one alert — with the agents in it, when it was notified, and every delivery attempt of its
-- notifications. Escalating and notifying compare `version`: one coordinator wins, one delivers.

CREATE TABLE alerts (
  seq                bigserial PRIMARY KEY,
  id                 text    NOT NULL UNIQUE,
  agent_type         text    NOT NULL,
  condition          text    NOT NULL,
  severity           text    NOT NULL,
  state              text    NOT NULL,
  agent_ids          jsonb   NOT NULL,
  all_agent_ids      jsonb   NOT NULL,
  summary            text    NOT NULL,
  channels           jsonb   NOT NULL,
  source             text    NOT NULL,
  evidence           jsonb   NOT NULL,
  first_at           bigint  NOT NULL,
  last_at            bigint  NOT NULL,
  notified_at        bigint,
  notified_agent_ids jsonb   NOT NULL DEFAULT '[]'::jsonb,
  notified_severity  text,
  escalated_at       bigint,
  resolved_at        bigint,
  resolved_notified  boolean NOT NULL DEFAULT false,
  version            bigint  NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX alerts_firing ON alerts (agent_type, condition) WHERE state = 'firing';
CREATE INDEX alerts_state ON alerts (state, seq);
CREATE INDEX alerts_unsettled ON alerts (seq) WHERE state = 'firing' OR (notified_at IS NOT NULL AND NOT resolved_notified);

CREATE TABLE alert_notifications (
  seq      bigserial PRIMARY KEY,
  alert_id text    NOT NULL,
  channel  text    NOT NULL,
  kind     text    NOT NULL,
  attempt  bigint  NOT NULL,
  ok       boolean NOT NULL,
  error    text,
  at       bigint  NOT NULL
);
CREATE INDEX alert_notifications_alert ON alert_notifications (alert_id, seq);
