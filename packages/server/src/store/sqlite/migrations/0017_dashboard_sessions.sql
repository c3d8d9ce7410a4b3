-- Dashboard sessions and one-time login codes (kind 'login' | 'session'), keyed by the sha256 of the
-- secret the browser holds (the store never sees the secret). A session's expires_at moves ahead each
-- time it is used; expired rows are deleted by the sweep.
CREATE TABLE dashboard_sessions (
  session_key TEXT    PRIMARY KEY,
  kind        TEXT    NOT NULL CHECK (kind IN ('login', 'session')),
  role        TEXT    NOT NULL CHECK (role IN ('admin', 'readonly')),
  csrf_token  TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
