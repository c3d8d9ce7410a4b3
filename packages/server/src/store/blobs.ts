/**
 * Result blobs (docs/design.md §5): results too large to be inline live apart from task state, under a key
 * the coordinator chooses (`<taskId>/<version>-<upload id>`), and the task keeps a `ResultRef`. Large agent
 * snapshots live here too (`<agentId>/<time>-<random>`, referred to by the snapshot's row). One
 * interface, two homes: files under the data directory (one coordinator, the default), or the shared
 * database itself (PostgreSQL: every coordinator of a deployment reads what any of them received).
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import type { ResultRef } from '@rouse/protocol';
import { RouseError } from '../core/errors.js';

/**
 * A blob's key: `<taskId>/<version>-<upload id>`, one per upload, so a repeated upload never
 * overwrites or deletes a blob the task already refers to.
 */
export function blobKey(taskId: string, version: number, uploadId: string): string {
  return `${taskId}/${version}-${uploadId}`;
}

/** What a blob key belongs to: a task (its result) or an agent (its snapshot's base). */
export function ownerOfBlobKey(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

/** What a sweep forgot. */
export interface BlobSweepResult {
  blobs: number;
  unfinishedUploads: number;
}

export interface BlobStore {
  /**
   * Store `body` under `key`; replaces an earlier blob with the same key. A body over the size limit
   * is refused with `payload_too_large` and leaves nothing behind; a reader never sees half a blob.
   */
  put(key: string, contentType: string, body: NodeJS.ReadableStream | Buffer): Promise<ResultRef>;
  /** A stream of the blob's bytes; `not_found` when it is missing. */
  open(ref: ResultRef): Promise<NodeJS.ReadableStream>;
  /** Forget the blob (nothing happens when there is none). */
  remove(key: string): Promise<void>;
  /**
   * Forget what nothing can read any more, when older than `olderThanMs` (store time): uploads that
   * never finished (their coordinator died mid-upload) and blobs no task or snapshot refers to (an
   * earlier attempt's upload, dropped when the task was claimed again). Returns how many of each went.
   */
  sweep?(input: { olderThanMs: number }): Promise<BlobSweepResult>;
}

export interface BlobStoreOptions {
  /** Largest blob accepted, in bytes. */
  maxBytes: number;
}

/** Counts and hashes bytes as they pass; fails the stream once the limit is exceeded. */
export class BlobMeter extends Transform {
  bytes = 0;
  tooLarge = false;
  readonly hash = createHash('sha256');

  constructor(private readonly limitBytes: number) {
    super();
  }

  override _transform(chunk: Buffer | string, _enc: BufferEncoding, done: TransformCallback): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.bytes += buf.length;
    if (this.bytes > this.limitBytes) {
      this.tooLarge = true;
      done(new Error('blob size limit exceeded'));
      return;
    }
    this.hash.update(buf);
    done(null, buf);
  }
}

/** The error for a body over `maxBytes`. */
export function blobTooLarge(maxBytes: number): RouseError {
  return new RouseError(
    'payload_too_large',
    `the result is larger than ${maxBytes} bytes; raise the blob size limit or store less`,
    { limitBytes: maxBytes },
  );
}

/** The error for a reference whose blob is gone. */
export function blobMissing(key: string): RouseError {
  return new RouseError('not_found', `result blob ${key} is missing`, { key });
}
