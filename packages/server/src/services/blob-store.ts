/**
 * Result blobs as files under the data directory (the default store of one coordinator), keyed
 * `<taskId>/<version>-<upload id>`. Writes go to a temp file and are renamed into place, so a reader
 * never sees half a blob; the sha256 is computed while streaming, and a body over the size limit is
 * refused with `413 payload_too_large` and leaves nothing behind.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RouseError } from '../core/errors.js';
import {
  BlobMeter,
  type BlobStore,
  type BlobStoreOptions,
  blobMissing,
  blobTooLarge,
} from '../store/blobs.js';

export type { BlobStore };

export interface FileBlobStoreOptions extends BlobStoreOptions {
  dir: string;
}

/** `<taskId>/<version>-<upload id>` (or the older `<taskId>/<version>`). */
const SAFE_KEY = /^[A-Za-z0-9_-]+\/[0-9]+(-[0-9a-f]+)?$/;

export function createFileBlobStore(options: FileBlobStoreOptions): BlobStore {
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
      const meter = new BlobMeter(options.maxBytes);
      const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
      try {
        await pipeline(source, meter, createWriteStream(temp, { flags: 'wx' }));
        await rename(temp, target);
      } catch (err) {
        await rm(temp, { force: true });
        if (meter.tooLarge) throw blobTooLarge(options.maxBytes);
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
          reject(err.code === 'ENOENT' ? blobMissing(ref.key) : err),
        );
      });
      return stream;
    },

    async remove(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}
