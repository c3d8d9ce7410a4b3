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

  it('refuses a body over the limit with 413 and leaves no file behind', async () => {
    const blobs = createFileBlobStore({ dir, maxBytes: 10 });
    await expect(blobs.put('tsk_A/1', 'x', Buffer.alloc(11))).rejects.toMatchObject({
      code: 'payload_too_large',
      details: { limitBytes: 10 },
    });
    expect(await readdir(join(dir, 'tsk_A'))).toEqual([]);
  });

  it('refuses keys that are not <id>/<version> (no path traversal)', async () => {
    const blobs = createFileBlobStore({ dir, maxBytes: 10 });
    await expect(blobs.put('../etc/1', 'x', Buffer.alloc(1))).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });

  it('a missing blob is not_found', async () => {
    const blobs = createFileBlobStore({ dir, maxBytes: 10 });
    await expect(
      blobs.open({ key: 'tsk_B/1', sizeBytes: 1, contentType: 'x', sha256: '' }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
