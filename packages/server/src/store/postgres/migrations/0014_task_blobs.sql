-- 0014_task_blobs: bytes a task's holder stored for the task (a coding agent's session transcript,
-- say), kept in the blob store under blob_key and found here by (task_id, blob_id). They live as long
-- as the task; the blob sweep keeps every key listed here.

CREATE TABLE task_blobs (
  task_id      text   NOT NULL,
  blob_id      text   NOT NULL,
  blob_key     text   NOT NULL UNIQUE,
  bytes        bigint NOT NULL,
  sha256       text   NOT NULL,
  content_type text   NOT NULL,
  created_at   bigint NOT NULL,
  PRIMARY KEY (task_id, blob_id)
);
