/**
 * Result blobs as files under the data directory (the default store of one coordinator), keyed
 * `<taskId>/<version>-<upload id>`. Writes go to a temp file and are renamed into place, so a reader
 * never sees half a blob; the sha256 is computed while streaming, and a body over the size limit is
 * refused with `413 payload_too_large` and leaves nothing behind.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RouseError } from '../core/errors.js';
import {
  BlobMeter,
  type BlobStore,
  type BlobStoreOptions,
  type BlobSweepResult,
  blobMissing,
  blobTooLarge,
} from '../store/blobs.js';

export type { BlobStore };

export interface FileBlobStoreOptions extends BlobStoreOptions {
  dir: string;
  /** What the sweep needs; without it the store offers no sweep. */
  sweep?: FileSweepDeps;
}

export interface FileSweepDeps {
  /** Whether a task still refers to the blob `key` (its `resultRef`). */
  isReferenced(key: string): Promise<boolean>;
  /** The clock the files' ages are read against. */
  now(): number;
}

/** `<taskId>/<version>-<upload id>` (or the older `<taskId>/<version>`). */
const SAFE_KEY = /^[A-Za-z0-9_-]+\/[0-9]+(-[0-9a-f]+)?$/;
/** `put`'s temp file: `<key>.<random>.tmp`. */
const TEMP_FILE = /^[A-Za-z0-9_-]+\/[0-9]+(-[0-9a-f]+)?\.[0-9a-f]+\.tmp$/;

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

  const store: BlobStore = {
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
  const sweeping = options.sweep;
  if (sweeping !== undefined)
    store.sweep = ({ olderThanMs }) => sweepFiles(options.dir, olderThanMs, sweeping);
  return store;
}

/**
 * Delete, once older than `olderThanMs`, the temp files of uploads that never finished and the blobs
 * no task refers to; then the task directories left empty. Files that are not ours are left alone.
 */
async function sweepFiles(dir: string, olderThanMs: number, deps: FileSweepDeps): Promise<BlobSweepResult> {
  const swept: BlobSweepResult = { blobs: 0, unfinishedUploads: 0 };
  const taskDirs = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const taskDir of taskDirs) {
    if (!taskDir.isDirectory()) continue;
    const path = join(dir, taskDir.name);
    const files = await readdir(path, { withFileTypes: true }).catch(() => []);
    for (const file of files) {
      if (!file.isFile()) continue;
      const filePath = join(path, file.name);
      const info = await stat(filePath).catch(() => null);
      if (info === null || deps.now() - info.mtimeMs < olderThanMs) continue;
      const key = `${taskDir.name}/${file.name}`;
      if (TEMP_FILE.test(key)) {
        await rm(filePath, { force: true });
        swept.unfinishedUploads++;
      } else if (SAFE_KEY.test(key) && !(await deps.isReferenced(key))) {
        await rm(filePath, { force: true });
        swept.blobs++;
      }
    }
    // Only when empty; a directory still in use stays.
    await rmdir(path).catch(() => undefined);
  }
  return swept;
}
