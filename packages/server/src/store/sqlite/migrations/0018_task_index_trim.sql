-- Fewer index entries to move on every create, claim and completion (each index a task is in costs
-- its B-tree work and, at every commit, one more WAL page per page it touches).
--
-- The lease index keyed by (shard, lease) goes: one SQLite file has one coordinator, which holds
-- every shard, so the due-leases query filters the shard after the range scan on `tasks_leases`
-- (keyed by the lease alone), as agents do since 0015. Keyed by shard first, the leases taken in one
-- commit landed on as many pages as there were shards among them.
DROP INDEX tasks_shard_leases;

-- The next-claimable-moment index holds only tasks that become claimable after they were created:
-- delayed runs and retries waiting out their backoff. A task that may run at once never needs it
-- (`available_at > now` cannot hold for it), and it was every task in the queue.
DROP INDEX tasks_available;
CREATE INDEX tasks_deferred ON tasks (available_at, type) WHERE available_at > created_at;
