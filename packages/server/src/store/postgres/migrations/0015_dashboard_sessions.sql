-- 0015_dashboard_sessions: dashboard sessions and one-time login codes (kind 'login' | 'session'),
-- keyed by the sha256 of the secret the browser holds (the store never sees the secret). A session's
-- expires_at moves ahead each time it is used; expired rows are deleted by the sweep.

CREATE TABLE dashboard_sessions (
  session_key text   PRIMARY KEY,
  kind        text   NOT NULL CHECK (kind IN ('login', 'session')),
  role        text   NOT NULL CHECK (role IN ('admin', 'readonly')),
  csrf_token  text   NOT NULL,
  created_at  bigint NOT NULL,
  expires_at  bigint NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
