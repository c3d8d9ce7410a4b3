-- 0004_status_index: list tasks by status without walking the whole table (the dashboard's "running",
-- "failed", "queued" views; `GET /v1/tasks?status=...`). Completed tasks are left out: they are most
-- of a long-lived table, every completion would add an entry, and a listing of completed tasks finds
-- them densely among the newest rows by walking the primary key. Every other transition writes a new
-- row version anyway, so the index costs one entry per claim (measured: within noise on the hot path).
--
-- Keyed by NULLIF(status, 'completed'), an expression only the listing names: every write statement
-- names a status next to the task id, and a generic plan made while the table is nearly empty could
-- otherwise reach its row through this index — walking every running task on each completion.
-- Built inside the migration's transaction: on a large existing table, writes wait for the build.

CREATE INDEX tasks_status ON tasks ((NULLIF(status, 'completed')), seq) WHERE status <> 'completed';
