-- 0012_agent_snapshots: one snapshot per agent slot, a base (JSON text inline, or the ResultRef of a
-- blob holding it) plus the merge patches written since (JSON texts, oldest first). JSON is kept as
-- text, as it was sent: jsonb would refuse a NUL escape and reorder members. version grows with every
-- write; the row is gone for reads once expires_at has passed, and deleted by the sweep.

CREATE TABLE agent_snapshots (
  agent_id     text    PRIMARY KEY,
  version      bigint  NOT NULL,
  base         text,
  base_ref     jsonb,
  base_bytes   bigint  NOT NULL,
  deltas       text[]  NOT NULL DEFAULT '{}',
  deltas_bytes bigint  NOT NULL DEFAULT 0,
  ttl_ms       bigint  NOT NULL,
  updated_at   bigint  NOT NULL,
  expires_at   bigint  NOT NULL
);
CREATE INDEX agent_snapshots_expiry ON agent_snapshots (expires_at);
