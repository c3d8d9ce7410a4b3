import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileBlobStore } from './blob-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-blobs-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString();
}

// The behaviour both homes share is in store/blob-stores.test.ts; here, what only files have.
describe('file blob store', () => {
  it('stores a stream under <taskId>/<version> with its size and sha256, and reads it back', async () => {
    const blobs = createFileBlobStore({ dir, maxBytes: 1000 });
    const ref = await blobs.put(
      'tsk_A/3',
      'text/plain',
      Readable.from([Buffer.from('hello '), Buffer.from('world')]),
    );
    expect(ref).toEqual({
      key: 'tsk_A/3',
      sizeBytes: 11,
      contentType: 'text/plain',
      sha256: createHash('sha256').update('hello world').digest('hex'),
    });
    expect(await text(await blobs.open(ref))).toBe('hello world');
    expect(await readdir(join(dir, 'tsk_A'))).toEqual(['3']);
  });

  it('refuses keys that are not <id>/<version> (no path traversal)', async () => {
    const blobs = createFileBlobStore({ dir, maxBytes: 10 });
    await expect(blobs.put('../etc/1', 'x', Buffer.alloc(1))).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });
});
