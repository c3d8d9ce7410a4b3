/**
 * Task blobs (docs/protocol.md "Task blobs"): bytes the holder of a task stores for it — a coding
 * agent's session transcript, carried to the next attempt on any host — in the blob store, under
 * `<taskId>/<version>-<blob id>`, recorded by the store (`task-blob-store.ts`) so they can be found by
 * id and are kept by the blob sweep. Fenced like every holder write; read by the task's current
 * holder and by admin and read-only tokens.
 */
import { randomBytes } from 'node:crypto';
import type { BlobRef } from '@rouse/protocol';
import { InvalidTransitionError, NotFoundError, RouseError, StaleVersionError } from '../core/errors.js';
import { HELD_STATUSES } from '../core/transitions.js';
import { blobKey } from '../store/blobs.js';
import { requireRead, requireTaskWriter } from './auth.js';
import type { Caller } from './coordinator.js';
import type { CoordinatorContext } from './coordinator-context.js';

export async function uploadTaskBlob(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  version: number,
  contentType: string,
  body: NodeJS.ReadableStream | Buffer,
): Promise<BlobRef> {
  const agentId = requireTaskWriter(caller, 'store a task blob');
  // Check before streaming bytes; the store re-checks atomically when recording the blob.
  const task = await ctx.store.getTask(id);
  if (task === null) throw new NotFoundError('task', id);
  if (task.version !== version) throw new StaleVersionError(id, version, task.version, task.status);
  const holder = agentId ?? task.agentId;
  if (holder === null || task.agentId !== holder) {
    throw new RouseError('forbidden', `agent ${holder} does not hold task ${id}`, {
      taskId: id,
      agentId: holder,
    });
  }
  if (!HELD_STATUSES.includes(task.status)) {
    throw new InvalidTransitionError(
      id,
      task.status,
      'running',
      'a blob can only be stored while the task is held',
    );
  }
  const blobId = randomBytes(16).toString('hex');
  const key = blobKey(id, version, blobId);
  const ref = await ctx.blobs.put(key, contentType, body);
  try {
    await ctx.store.recordTaskBlob({
      taskId: id,
      agentId: holder,
      version,
      blob: { id: blobId, key, bytes: ref.sizeBytes, sha256: ref.sha256, contentType: ref.contentType },
    });
  } catch (err) {
    await ctx.blobs.remove(key);
    throw err;
  }
  return { id: blobId, bytes: ref.sizeBytes, sha256: ref.sha256, contentType: ref.contentType };
}

export async function getTaskBlob(
  ctx: CoordinatorContext,
  caller: Caller,
  id: string,
  blobId: string,
): Promise<{ ref: BlobRef; stream: NodeJS.ReadableStream }> {
  requireRead(caller, 'read task blobs');
  const task = await ctx.store.getTask(id);
  if (task === null) throw new NotFoundError('task', id);
  if (caller.kind === 'agent' && task.agentId !== caller.agentId) {
    throw new RouseError('forbidden', `only the holder of task ${id} may read its blobs`, { taskId: id });
  }
  const row = await ctx.store.getTaskBlob(id, blobId);
  if (row === null) {
    throw new RouseError('not_found', `task ${id} has no blob ${blobId}`, {
      kind: 'blob',
      id: blobId,
      taskId: id,
    });
  }
  const stream = await ctx.blobs.open({
    key: row.key,
    sizeBytes: row.bytes,
    sha256: row.sha256,
    contentType: row.contentType,
  });
  return { ref: { id: row.id, bytes: row.bytes, sha256: row.sha256, contentType: row.contentType }, stream };
}
