-- Task blobs: bytes a task's holder stored for the task (a coding agent's session transcript, say),
-- kept in the blob store under `key` and found here by (task_id, blob_id). They live as long as the
-- task; the blob sweep keeps every key listed here.
CREATE TABLE task_blobs (
  task_id      TEXT    NOT NULL,
  blob_id      TEXT    NOT NULL,
  blob_key     TEXT    NOT NULL UNIQUE,
  bytes        INTEGER NOT NULL,
  sha256       TEXT    NOT NULL,
  content_type TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (task_id, blob_id)
);
