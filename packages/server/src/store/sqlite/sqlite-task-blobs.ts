/** The SQLite TaskBlobStore: blobs stored for a task by its holder (see `task-blob-store.ts`). */
import type { TaskBlobRow, TaskBlobStore } from '../store.js';
import type { SqliteContext } from './sqlite-context.js';

interface Row {
  task_id: string;
  blob_id: string;
  blob_key: string;
  bytes: number;
  sha256: string;
  content_type: string;
  created_at: number;
}

const toBlob = (r: Row): TaskBlobRow => ({
  taskId: r.task_id,
  id: r.blob_id,
  key: r.blob_key,
  bytes: r.bytes,
  sha256: r.sha256,
  contentType: r.content_type,
  createdAt: r.created_at,
});

export function recordTaskBlob(
  ctx: SqliteContext,
  input: Parameters<TaskBlobStore['recordTaskBlob']>[0],
): TaskBlobRow {
  const now = ctx.clock.now();
  const { blob } = input;
  const { changes } = ctx.taskBlobs.recordTaskBlob.run({
    taskId: input.taskId,
    agentId: input.agentId,
    version: input.version,
    id: blob.id,
    key: blob.key,
    bytes: blob.bytes,
    sha256: blob.sha256,
    contentType: blob.contentType,
    now,
  });
  if (changes === 0) {
    throw ctx.refused({ kind: 'hold', taskId: input.taskId, version: input.version, agentId: input.agentId });
  }
  return { ...blob, taskId: input.taskId, createdAt: now };
}

export function getTaskBlob(ctx: SqliteContext, taskId: string, id: string): TaskBlobRow | null {
  const row = ctx.taskBlobs.selectTaskBlob.get({ taskId, id }) as Row | undefined;
  return row === undefined ? null : toBlob(row);
}

export function isTaskBlobKey(ctx: SqliteContext, key: string): boolean {
  return ctx.taskBlobs.isTaskBlobKey.get({ key }) !== undefined;
}
