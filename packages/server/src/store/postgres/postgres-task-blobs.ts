/** The PostgreSQL TaskBlobStore: blobs stored for a task by its holder (see `task-blob-store.ts`). */
import type { TaskBlobRow, TaskBlobStore } from '../store.js';
import type { PgContext } from './postgres-context.js';
import { TASK_BLOB_SQL } from './task-blob-statements.js';

interface Row {
  task_id: string;
  blob_id: string;
  blob_key: string;
  bytes: string | number;
  sha256: string;
  content_type: string;
  created_at: string | number;
}

export async function recordTaskBlob(
  ctx: PgContext,
  input: Parameters<TaskBlobStore['recordTaskBlob']>[0],
): Promise<TaskBlobRow> {
  const { blob } = input;
  const [row] = await ctx.rows<{ created_at: string | number }>(
    'recordTaskBlob',
    TASK_BLOB_SQL.recordTaskBlob,
    [
      ctx.now(),
      input.taskId,
      input.agentId,
      input.version,
      blob.id,
      blob.key,
      blob.bytes,
      blob.sha256,
      blob.contentType,
    ],
  );
  if (row === undefined) {
    throw await ctx.refused({
      kind: 'hold',
      taskId: input.taskId,
      version: input.version,
      agentId: input.agentId,
    });
  }
  return { ...blob, taskId: input.taskId, createdAt: Number(row.created_at) };
}

export async function getTaskBlob(ctx: PgContext, taskId: string, id: string): Promise<TaskBlobRow | null> {
  const [r] = await ctx.rows<Row>('selectTaskBlob', TASK_BLOB_SQL.selectTaskBlob, [taskId, id]);
  if (r === undefined) return null;
  return {
    taskId: r.task_id,
    id: r.blob_id,
    key: r.blob_key,
    bytes: Number(r.bytes),
    sha256: r.sha256,
    contentType: r.content_type,
    createdAt: Number(r.created_at),
  };
}

export async function isTaskBlobKey(ctx: PgContext, key: string): Promise<boolean> {
  return (await ctx.rows('isTaskBlobKey', TASK_BLOB_SQL.isTaskBlobKey, [key])).length > 0;
}
