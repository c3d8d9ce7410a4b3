-- Agent snapshots: one per agent slot, a base (JSON text inline, or the ResultRef of a blob holding it)
-- plus the merge patches written since (a JSON array of them, oldest first). version grows with every
-- write; the row is gone for reads once expires_at has passed, and deleted by the sweep.
CREATE TABLE agent_snapshots (
  agent_id     TEXT    PRIMARY KEY,
  version      INTEGER NOT NULL,
  base         TEXT,
  base_ref     TEXT,
  base_bytes   INTEGER NOT NULL,
  deltas       TEXT    NOT NULL DEFAULT '[]',
  delta_count  INTEGER NOT NULL DEFAULT 0,
  deltas_bytes INTEGER NOT NULL DEFAULT 0,
  ttl_ms       INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL
);
CREATE INDEX agent_snapshots_expiry ON agent_snapshots (expires_at);
