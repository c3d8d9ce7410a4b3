-- 0002_lease_shards: lease expiry split into shards held by coordinators (docs/design.md §6, §8).
-- A task's shard is fixed at creation (shardOf(id), lease-shards.ts) so that a shard's overdue
-- leases are one indexed query. Tasks created before this migration get theirs here, through
-- rouse_shard_of(), which the migration runner registers on the connection (same function).

ALTER TABLE tasks ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
UPDATE tasks SET shard = rouse_shard_of(id);

-- A shard's held leases in deadline order (the shard owner's sweep).
CREATE INDEX tasks_shard_leases ON tasks (shard, lease_expires_at) WHERE lease_expires_at IS NOT NULL;

-- Who holds each lease shard, until when (store clock), and how often it changed hands.
CREATE TABLE shard_leases (
  shard      INTEGER PRIMARY KEY,
  owner_id   TEXT    NOT NULL,
  -- Grows every time the shard changes hands.
  epoch      INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
