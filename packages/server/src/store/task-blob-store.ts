/**
 * The task-blobs part of the Store contract (docs/design.md §5): bytes a task's holder stores for the
 * task (`PUT /v1/tasks/{id}/blobs`) — a coding agent's session transcript, carried to the next
 * attempt on any host — kept in the blob store under `<taskId>/b-<blob id>`, each recorded here so it
 * can be found by id and so the blob sweep keeps it. They live as long as the task. Part of `Store`
 * (`store.ts`).
 */

/** One stored task blob. */
export interface TaskBlobRow {
  taskId: string;
  /** Its id within the task (what `GET /v1/tasks/{id}/blobs/{blobId}` names). */
  id: string;
  /** Its key in the blob store. */
  key: string;
  bytes: number;
  sha256: string;
  contentType: string;
  createdAt: number;
}

export interface TaskBlobStore {
  /**
   * Record a blob the holder uploaded: only while `agentId` holds the task at `version` (claimed or
   * running) — else refused like any write of a lost lease (`stale_version`, `not_found`, …) and
   * nothing is recorded.
   */
  recordTaskBlob(input: {
    taskId: string;
    agentId: string;
    version: number;
    blob: Omit<TaskBlobRow, 'taskId' | 'createdAt'>;
  }): Promise<TaskBlobRow>;
  /** The blob `id` of the task, or null. */
  getTaskBlob(taskId: string, id: string): Promise<TaskBlobRow | null>;
  /** True when `key` is a recorded task blob (the blob sweep keeps it). */
  isTaskBlobKey(key: string): Promise<boolean>;
}
