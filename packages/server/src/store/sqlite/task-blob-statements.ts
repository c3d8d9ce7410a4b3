/** The SQLite task-blob statements (see `task-blob-store.ts`), prepared once per connection. */
export const TASK_BLOB_SQL = {
  /**
   * Record a blob while the agent holds the task at that version. Params: @taskId, @agentId,
   * @version, @id, @key, @bytes, @sha256, @contentType, @now.
   */
  recordTaskBlob: `
    INSERT INTO task_blobs (task_id, blob_id, blob_key, bytes, sha256, content_type, created_at)
    SELECT @taskId, @id, @key, @bytes, @sha256, @contentType, @now
    WHERE EXISTS (SELECT 1 FROM tasks WHERE id = @taskId AND version = @version AND agent_id = @agentId
                    AND status IN ('claimed', 'running'))`,

  /** Params: @taskId, @id. */
  selectTaskBlob: `
    SELECT task_id, blob_id, blob_key, bytes, sha256, content_type, created_at
    FROM task_blobs WHERE task_id = @taskId AND blob_id = @id`,

  /** Params: @key. */
  isTaskBlobKey: 'SELECT 1 AS hit FROM task_blobs WHERE blob_key = @key',
} as const;
