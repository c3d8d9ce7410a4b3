-- 0002_coordinators: live coordinators, so that they split the lease shards evenly (docs/design.md §6).
-- Each coordinator upserts its row with every shard renewal; a row whose expires_at has passed (store
-- clock) is a coordinator that stopped or died, and is deleted by the next announcement.

CREATE TABLE coordinators (
  id           text   PRIMARY KEY,
  last_seen_at bigint NOT NULL,
  expires_at   bigint NOT NULL
);
