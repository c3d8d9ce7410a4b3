-- Every agent heartbeat moves its lease, and so its entry in the lease index. Keyed by (shard, lease),
-- the new entries of one commit's beats landed on as many index pages as there were shards among them
-- (~2.4 WAL pages written per beat); keyed by the lease alone they all append to the same last page.
-- One SQLite file has one coordinator, which holds every shard, so the due-leases query loses nothing
-- by filtering the shard after the range scan.
DROP INDEX agents_shard_leases;
CREATE INDEX agents_leases ON agents (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
