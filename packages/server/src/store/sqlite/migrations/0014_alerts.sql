-- Alerts: one firing alert per (agent type, condition) group — raising into a group is a conditional
-- write (an upsert on the partial unique index) — with the agents in it (JSON arrays of ids), when it
-- was notified, and every delivery attempt of its notifications.
CREATE TABLE alerts (
  seq                INTEGER PRIMARY KEY,
  id                 TEXT    NOT NULL UNIQUE,
  agent_type         TEXT    NOT NULL,
  condition          TEXT    NOT NULL,
  severity           TEXT    NOT NULL,
  state              TEXT    NOT NULL,
  agent_ids          TEXT    NOT NULL,
  all_agent_ids      TEXT    NOT NULL,
  summary            TEXT    NOT NULL,
  channels           TEXT    NOT NULL,
  source             TEXT    NOT NULL,
  evidence           TEXT    NOT NULL,
  first_at           INTEGER NOT NULL,
  last_at            INTEGER NOT NULL,
  notified_at        INTEGER,
  notified_agent_ids TEXT    NOT NULL DEFAULT '[]',
  notified_severity  TEXT,
  escalated_at       INTEGER,
  resolved_at        INTEGER,
  resolved_notified  INTEGER NOT NULL DEFAULT 0,
  version            INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX alerts_firing ON alerts (agent_type, condition) WHERE state = 'firing';
CREATE INDEX alerts_state ON alerts (state, seq);
CREATE INDEX alerts_unsettled ON alerts (seq) WHERE state = 'firing' OR (notified_at IS NOT NULL AND resolved_notified = 0);

CREATE TABLE alert_notifications (
  seq      INTEGER PRIMARY KEY,
  alert_id TEXT    NOT NULL,
  channel  TEXT    NOT NULL,
  kind     TEXT    NOT NULL,
  attempt  INTEGER NOT NULL,
  ok       INTEGER NOT NULL,
  error    TEXT,
  at       INTEGER NOT NULL
);
CREATE INDEX alert_notifications_alert ON alert_notifications (alert_id, seq);
