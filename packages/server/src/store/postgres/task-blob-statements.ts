/** The PostgreSQL task-blob statements (see `task-blob-store.ts`). */
import { CLOCK_CTE } from './sql-fragments.js';

export const TASK_BLOB_SQL = {
  /**
   * Record a blob while the agent holds the task at that version. Params: $1 now, $2 task id,
   * $3 agent id, $4 version, $5 blob id, $6 key, $7 bytes, $8 sha256, $9 content type.
   */
  recordTaskBlob: `
    WITH ${CLOCK_CTE}
    INSERT INTO task_blobs (task_id, blob_id, blob_key, bytes, sha256, content_type, created_at)
    SELECT $2, $5, $6, $7, $8, $9, clock.now FROM clock
    WHERE EXISTS (SELECT 1 FROM tasks WHERE id = $2 AND version = $4 AND agent_id = $3
                    AND status IN ('claimed', 'running'))
    RETURNING created_at`,

  /** Params: $1 task id, $2 blob id. */
  selectTaskBlob: `
    SELECT task_id, blob_id, blob_key, bytes, sha256, content_type, created_at
    FROM task_blobs WHERE task_id = $1 AND blob_id = $2`,

  /** Params: $1 key. */
  isTaskBlobKey: 'SELECT 1 AS hit FROM task_blobs WHERE blob_key = $1',
} as const;
