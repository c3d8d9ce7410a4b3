-- 0003_result_blobs: result blobs kept in the database, so that every coordinator sharing it reads
-- what any of them received (docs/design.md §5: results stored apart from task state). A blob is written
-- as chunks under an upload id first; its row in result_blobs, written last, makes it visible, so a
-- reader never sees half a blob.

CREATE TABLE result_blobs (
  key          text    PRIMARY KEY,
  upload_id    text    NOT NULL,
  content_type text    NOT NULL,
  size_bytes   bigint  NOT NULL,
  sha256       text    NOT NULL,
  chunk_count  integer NOT NULL,
  created_at   bigint  NOT NULL
);
-- The sweep tells finished uploads from unfinished ones by this.
CREATE INDEX result_blobs_upload ON result_blobs (upload_id);

CREATE TABLE result_blob_chunks (
  upload_id  text    NOT NULL,
  n          integer NOT NULL,
  -- When the chunk was written (store clock): tells the chunks of an upload that never finished.
  created_at bigint  NOT NULL,
  data       bytea   NOT NULL,
  PRIMARY KEY (upload_id, n)
);
-- The sweep finds old chunks by age.
CREATE INDEX result_blob_chunks_age ON result_blob_chunks (created_at);
