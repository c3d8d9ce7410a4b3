-- 0004_status_index: list tasks by status without walking the whole table (the dashboard's "running",
-- "failed", "queued" views; `GET /v1/tasks?status=...`). Completed tasks are left out: they are most
-- of a long-lived table, every completion would add an entry, and a listing of completed tasks finds
-- them densely among the newest rows by walking the primary key.

CREATE INDEX tasks_status ON tasks (status, seq) WHERE status <> 'completed';
