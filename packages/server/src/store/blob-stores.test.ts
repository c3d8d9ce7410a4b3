/**
 * The blob store's behaviour in both homes: files in a data directory (one coordinator) and the
 * PostgreSQL tables of migration 0003 (shared by every coordinator of a deployment; a second store
 * on the same schema stands in for a second coordinator); and, in both, the sweep of blobs nothing
 * can read any more.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type FreshSchema, freshSchema } from '../../../../test/harness/postgres.js';
import { ManualClock } from '../core/clock.js';
import { createFileBlobStore } from '../services/blob-store.js';
import { NO_BACKOFF, newTask, T0 } from '../test-support/store-contract/harness.js';
import type { BlobStore } from './blobs.js';
import { createPostgresStore } from './postgres/postgres-store.js';
import { createSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

interface Home {
  /** A blob store with this size limit; `peer` is another handle on the same storage. */
  open(maxBytes: number): Promise<{ blobs: BlobStore; peer: BlobStore }>;
  /** Stored pieces left over (files, or chunk rows), to show a refused upload leaves nothing. */
  leftovers(): Promise<number>;
  close(): Promise<void>;
}

function fileHome(): Home {
  let dir = '';
  return {
    async open(maxBytes) {
      dir = await mkdtemp(join(tmpdir(), 'rouse-blobs-'));
      const blobs = createFileBlobStore({ dir, maxBytes });
      return { blobs, peer: createFileBlobStore({ dir, maxBytes }) };
    },
    async leftovers() {
      const entries = await readdir(dir, { recursive: true, withFileTypes: true });
      return entries.filter((e) => e.isFile()).length;
    },
    async close() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function postgresHome(): Home {
  let db: FreshSchema | undefined;
  const stores: Store[] = [];
  return {
    async open(maxBytes) {
      db = await freshSchema('blobs');
      for (let i = 0; i < 2; i++)
        stores.push(await createPostgresStore({ connectionString: db.connectionString, schema: db.schema }));
      return {
        blobs: stores[0]!.createBlobStore!({ maxBytes }),
        peer: stores[1]!.createBlobStore!({ maxBytes }),
      };
    },
    async leftovers() {
      const client = new pg.Client({ connectionString: db!.connectionString });
      await client.connect();
      try {
        const { rows } = await client.query(
          `SELECT (SELECT count(*) FROM "${db!.schema}".result_blob_chunks)::int AS n`,
        );
        return rows[0].n as number;
      } finally {
        await client.end();
      }
    },
    async close() {
      for (const s of stores.splice(0)) await s.close();
      await db?.drop();
    },
  };
}

async function bytes(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe.each([
  ['files', fileHome],
  ['PostgreSQL', postgresHome],
])('blob store in %s', (_name, makeHome) => {
  let home: Home;
  afterEach(async () => {
    await home.close();
  });

  it('streams a body of several MiB in and back out, through the other handle too, with size and sha256', async () => {
    home = makeHome();
    const { blobs, peer } = await home.open(8 * 1024 * 1024);
    // 2.5 MiB in uneven pieces: several stored chunks, pieces straddling their boundaries.
    const body = randomBytes(2.5 * 1024 * 1024);
    const pieces = [body.subarray(0, 1000), body.subarray(1000, 1_500_000), body.subarray(1_500_000)];
    const ref = await blobs.put('tsk_A/3-aa', 'application/octet-stream', Readable.from(pieces));
    expect(ref).toEqual({
      key: 'tsk_A/3-aa',
      sizeBytes: body.length,
      contentType: 'application/octet-stream',
      sha256: sha256(body),
    });
    expect((await bytes(await blobs.open(ref))).equals(body)).toBe(true);
    expect((await bytes(await peer.open(ref))).equals(body)).toBe(true);
  });

  it('an empty body is a blob of 0 bytes', async () => {
    home = makeHome();
    const { blobs } = await home.open(10);
    const ref = await blobs.put('tsk_E/1-ee', 'text/plain', Buffer.alloc(0));
    expect(ref.sizeBytes).toBe(0);
    expect((await bytes(await blobs.open(ref))).length).toBe(0);
  });

  it('refuses a body over the limit with payload_too_large and leaves nothing behind', async () => {
    home = makeHome();
    const { blobs } = await home.open(1024 * 1024 + 10);
    await expect(blobs.put('tsk_A/1-bb', 'x', Buffer.alloc(2 * 1024 * 1024))).rejects.toMatchObject({
      code: 'payload_too_large',
      details: { limitBytes: 1024 * 1024 + 10 },
    });
    await expect(
      blobs.open({ key: 'tsk_A/1-bb', sizeBytes: 0, contentType: 'x', sha256: '' }),
    ).rejects.toMatchObject({ code: 'not_found' });
    expect(await home.leftovers()).toBe(0);
  });

  it('a second put under the same key replaces the first; remove forgets it (twice is fine)', async () => {
    home = makeHome();
    const { blobs, peer } = await home.open(1000);
    await blobs.put('tsk_R/2-cc', 'text/plain', Buffer.from('first'));
    const ref = await blobs.put('tsk_R/2-cc', 'text/plain', Buffer.from('second!'));
    expect((await bytes(await peer.open(ref))).toString()).toBe('second!');
    expect(await home.leftovers()).toBe(1);
    await peer.remove('tsk_R/2-cc');
    await peer.remove('tsk_R/2-cc');
    await expect(blobs.open(ref)).rejects.toMatchObject({ code: 'not_found' });
    expect(await home.leftovers()).toBe(0);
  });

  it('a blob that was never stored is not_found', async () => {
    home = makeHome();
    const { blobs } = await home.open(10);
    await expect(
      blobs.open({ key: 'tsk_B/1-dd', sizeBytes: 1, contentType: 'x', sha256: '' }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});

interface SweepHome {
  clock: ManualClock;
  store: Store;
  blobs: BlobStore;
  /** Leave what a coordinator that died mid-upload leaves. */
  leaveUnfinishedUpload(): Promise<void>;
  /** Stored pieces left (chunk rows, or files). */
  pieces(): Promise<number>;
  close(): Promise<void>;
}

async function fileSweepHome(): Promise<SweepHome> {
  const dir = await mkdtemp(join(tmpdir(), 'rouse-sweep-'));
  // The files' ages are read against this clock: it starts at the real time, then the test moves it.
  const clock = new ManualClock(Date.now());
  const store = createSqliteStore({ path: ':memory:', clock });
  const blobs = createFileBlobStore({
    dir,
    maxBytes: 1000,
    sweep: {
      isReferenced: async (key) => (await store.getTask(key.split('/')[0]!))?.resultRef?.key === key,
      now: () => clock.now(),
    },
  });
  return {
    clock,
    store,
    blobs,
    async leaveUnfinishedUpload() {
      await mkdir(join(dir, 'tsk_dead'), { recursive: true });
      await writeFile(join(dir, 'tsk_dead', '1-dead.0a1b2c.tmp'), 'half');
    },
    async pieces() {
      const entries = await readdir(dir, { recursive: true, withFileTypes: true });
      return entries.filter((e) => e.isFile()).length;
    },
    async close() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function postgresSweepHome(): Promise<SweepHome> {
  const db = await freshSchema('sweep');
  const clock = new ManualClock(T0);
  const store = await createPostgresStore({
    connectionString: db.connectionString,
    schema: db.schema,
    clock,
  });
  const sql = async (text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: db.connectionString });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    clock,
    store,
    blobs: store.createBlobStore!({ maxBytes: 1000 }),
    async leaveUnfinishedUpload() {
      await sql(
        `INSERT INTO "${db.schema}".result_blob_chunks (upload_id, n, created_at, data) VALUES ('dead', 0, $1, '\\x00')`,
        [clock.now()],
      );
    },
    async pieces() {
      return (await sql(`SELECT count(*)::int AS n FROM "${db.schema}".result_blob_chunks`))[0].n as number;
    },
    async close() {
      await store.close();
      await db.drop();
    },
  };
}

describe.each([
  ['files (SQLite)', fileSweepHome],
  ['PostgreSQL', postgresSweepHome],
])('blob sweep in %s', (_name, makeHome) => {
  let home: SweepHome | undefined;
  afterEach(async () => {
    await home?.close();
    home = undefined;
  });

  it('forgets an earlier attempt’s upload and an unfinished upload once old enough, and keeps what a task refers to', async () => {
    home = await makeHome();
    const { store, blobs, clock } = home;
    const [created] = await store.createTasks([
      newTask('tsk_sweep', { type: 'sweep', payload: null, maxAttempts: 3 }),
    ]);
    const claim = { agentId: 'agt_a', types: ['sweep'], max: 1, start: true, backoff: NO_BACKOFF };
    // Attempt 1 uploads, then fails; attempt 2 (the claim drops attempt 1's reference) uploads again.
    const [first] = await store.claimTasks(claim);
    const held1 = { taskId: created!.task.id, agentId: 'agt_a', version: first!.task.version };
    const ref1 = await blobs.put(`${held1.taskId}/${held1.version}-aaa`, 'text/plain', Buffer.from('one'));
    await store.setResultRef({ ...held1, resultRef: ref1 });
    await store.failTask({
      ...held1,
      error: { code: 'boom', message: 'again', retryable: true },
      backoff: NO_BACKOFF,
    });
    const [second] = await store.claimTasks(claim);
    const held2 = { ...held1, version: second!.task.version };
    const ref2 = await blobs.put(`${held2.taskId}/${held2.version}-bbb`, 'text/plain', Buffer.from('two'));
    await store.setResultRef({ ...held2, resultRef: ref2 });
    await home.leaveUnfinishedUpload();
    expect(await home.pieces()).toBe(3);

    // Young: nothing goes.
    expect(await blobs.sweep!({ olderThanMs: 3_600_000 })).toEqual({ blobs: 0, unfinishedUploads: 0 });
    // (A minute more: the files were written a little after the test clock's start.)
    clock.advance(3_660_000);
    expect(await blobs.sweep!({ olderThanMs: 3_600_000 })).toEqual({ blobs: 1, unfinishedUploads: 1 });
    await expect(blobs.open(ref1)).rejects.toMatchObject({ code: 'not_found' });
    expect((await bytes(await blobs.open(ref2))).toString()).toBe('two');
    expect(await home.pieces()).toBe(1);
    // Nothing left to sweep.
    expect(await blobs.sweep!({ olderThanMs: 3_600_000 })).toEqual({ blobs: 0, unfinishedUploads: 0 });
  });
});
