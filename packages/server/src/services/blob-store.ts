/**
 * Result blobs (DESIGN.md §5): large results live as files under the data directory, keyed
 * `<taskId>/<version>`, and the task keeps a `ResultRef`. Writes go to a temp file and are renamed
 * into place, so a reader never sees half a blob; the sha256 is computed while streaming, and a body
 * over the size limit is refused with `413 payload_too_large` and leaves nothing behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ResultRef } from '@rouse/protocol';
import { RouseError } from '../core/errors.js';

export interface BlobStore {
  /** Store `body` under `key` (`<taskId>/<version>`); replaces an earlier blob with the same key. */
  put(key: string, contentType: string, body: NodeJS.ReadableStream | Buffer): Promise<ResultRef>;
  /** A stream of the blob's bytes; `not_found` when it is missing. */
  open(ref: ResultRef): Promise<NodeJS.ReadableStream>;
  remove(key: string): Promise<void>;
}

export interface BlobStoreOptions {
  dir: string;
  maxBytes: number;
}

/** `<taskId>/<version>-<upload id>` (or the older `<taskId>/<version>`). */
const SAFE_KEY = /^[A-Za-z0-9_-]+\/[0-9]+(-[0-9a-f]+)?$/;

export function createFileBlobStore(options: BlobStoreOptions): BlobStore {
  const pathOf = (key: string): string => {
    // Keys are built by the coordinator from ids it issued; refuse anything else (no path traversal).
    if (!SAFE_KEY.test(key))
      throw new RouseError(
        'validation_failed',
        `blob key ${JSON.stringify(key)} is not <taskId>/<version>-<upload id>`,
      );
    return join(options.dir, key);
  };

  return {
    async put(key, contentType, body) {
      const target = pathOf(key);
      await mkdir(join(target, '..'), { recursive: true });
      const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
      const meter = new Meter(options.maxBytes);
      const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
      try {
        await pipeline(source, meter, createWriteStream(temp, { flags: 'wx' }));
        await rename(temp, target);
      } catch (err) {
        await rm(temp, { force: true });
        if (meter.tooLarge) {
          throw new RouseError(
            'payload_too_large',
            `the result is larger than ${options.maxBytes} bytes; raise the blob size limit or store less`,
            { limitBytes: options.maxBytes },
          );
        }
        throw err;
      }
      return { key, sizeBytes: meter.bytes, contentType, sha256: meter.hash.digest('hex') };
    },

    async open(ref) {
      const path = pathOf(ref.key);
      const stream = createReadStream(path);
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', (err: NodeJS.ErrnoException) =>
          reject(
            err.code === 'ENOENT'
              ? new RouseError('not_found', `result blob ${ref.key} is missing`, { key: ref.key })
              : err,
          ),
        );
      });
      return stream;
    },

    async remove(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}

/** Counts and hashes bytes as they pass; errors once the limit is exceeded. */
class Meter extends Transform {
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
