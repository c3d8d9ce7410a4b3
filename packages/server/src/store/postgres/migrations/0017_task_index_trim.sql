-- 0017_task_index_trim: the next-claimable-moment index holds only tasks that become claimable after
-- they were created: delayed runs and retries waiting out their backoff. A task that may run at once
-- never needs it (`available_at > now` cannot hold for it), and it was every task in the queue: one
-- more index entry to write for every create.
DROP INDEX tasks_available;
CREATE INDEX tasks_deferred ON tasks (available_at, type) WHERE available_at > created_at;
