/**
 * Result blobs in PostgreSQL (migration 0003): every coordinator sharing the database reads what any
 * of them received, with nothing else to set up. A blob is streamed in as chunks under a fresh upload
 * id (one short statement per chunk: no transaction or connection is held while a slow client sends),
 * then one statement publishes it under its key and drops the chunks of the blob it replaces. A
 * failed or oversized upload deletes its chunks. Reading streams the chunks back one at a time. The
 * coordinators' housekeeping sweeps what nothing can read any more (`sweep`).
 */
import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ResultRef } from '@rouse/protocol';
import { BlobMeter, type BlobStore, type BlobStoreOptions, blobMissing, blobTooLarge } from '../blobs.js';
import type { PgContext } from './postgres-context.js';
import { CLOCK_CTE } from './sql-fragments.js';

/** Bytes per stored chunk. */
const CHUNK_BYTES = 1024 * 1024;

const BLOB_SQL = {
  /** Params: $1 now, $2 upload id, $3 n, $4 data. */
  insertChunk: `
    WITH ${CLOCK_CTE}
    INSERT INTO result_blob_chunks (upload_id, n, created_at, data)
    SELECT $2, $3, clock.now, $4::bytea FROM clock`,

  /**
   * Publish an upload under its key, replacing (and dropping the chunks of) an earlier blob with the
   * same key. Params: $1 now, $2 key, $3 upload id, $4 content type, $5 size, $6 sha256, $7 chunks.
   */
  publish: `
    WITH ${CLOCK_CTE},
    old AS (SELECT upload_id FROM result_blobs WHERE key = $2 AND upload_id <> $3),
    up AS (
      INSERT INTO result_blobs (key, upload_id, content_type, size_bytes, sha256, chunk_count, created_at)
      SELECT $2, $3, $4, $5, $6, $7, clock.now FROM clock
      ON CONFLICT (key) DO UPDATE SET upload_id = EXCLUDED.upload_id, content_type = EXCLUDED.content_type,
        size_bytes = EXCLUDED.size_bytes, sha256 = EXCLUDED.sha256, chunk_count = EXCLUDED.chunk_count,
        created_at = EXCLUDED.created_at
    )
    DELETE FROM result_blob_chunks c USING old WHERE c.upload_id = old.upload_id`,

  /** Params: $1 upload id. */
  dropUpload: 'DELETE FROM result_blob_chunks WHERE upload_id = $1',

  /** Params: $1 key. */
  selectBlob: 'SELECT upload_id, chunk_count FROM result_blobs WHERE key = $1',

  /** Params: $1 upload id, $2 n. */
  selectChunk: 'SELECT data FROM result_blob_chunks WHERE upload_id = $1 AND n = $2',

  /**
   * Blobs older than $2 ms that no task and no agent snapshot refers to (the key starts with the id of
   * its task or agent: `blobKey`), with their chunks. Params: $1 now, $2 age.
   */
  sweepBlobs: `
    WITH ${CLOCK_CTE},
    gone AS (
      DELETE FROM result_blobs b USING clock
      WHERE b.created_at < clock.now - $2::bigint
        AND NOT EXISTS (SELECT 1 FROM tasks t
                        WHERE t.id = split_part(b.key, '/', 1) AND t.result_ref->>'key' = b.key)
        AND NOT EXISTS (SELECT 1 FROM agent_snapshots s
                        WHERE s.agent_id = split_part(b.key, '/', 1) AND s.base_ref->>'key' = b.key)
        AND NOT EXISTS (SELECT 1 FROM task_blobs tb WHERE tb.blob_key = b.key)
      RETURNING b.upload_id
    ),
    chunks AS (DELETE FROM result_blob_chunks c USING gone WHERE c.upload_id = gone.upload_id)
    SELECT count(*)::integer AS n FROM gone`,

  /** Chunks older than $2 ms of uploads that were never published. Params: $1 now, $2 age. */
  sweepUnfinished: `
    WITH ${CLOCK_CTE},
    gone AS (
      DELETE FROM result_blob_chunks c USING clock
      WHERE c.created_at < clock.now - $2::bigint
        AND NOT EXISTS (SELECT 1 FROM result_blobs b WHERE b.upload_id = c.upload_id)
      RETURNING c.upload_id
    )
    SELECT count(DISTINCT upload_id)::integer AS n FROM gone`,

  /** Params: $1 key. */
  remove: `
    WITH b AS (DELETE FROM result_blobs WHERE key = $1 RETURNING upload_id)
    DELETE FROM result_blob_chunks c USING b WHERE c.upload_id = b.upload_id`,
} as const;

export function createPostgresBlobStore(ctx: PgContext, options: BlobStoreOptions): BlobStore {
  return {
    async put(key, contentType, body): Promise<ResultRef> {
      const upload = randomBytes(12).toString('hex');
      const meter = new BlobMeter(options.maxBytes);
      let chunks = 0;
      let buffered: Buffer[] = [];
      let bufferedBytes = 0;
      const flush = async (): Promise<void> => {
        const data = buffered.length === 1 ? buffered[0]! : Buffer.concat(buffered);
        buffered = [];
        bufferedBytes = 0;
        await ctx.run('insertBlobChunk', BLOB_SQL.insertChunk, [ctx.now(), upload, chunks, data]);
        chunks++;
      };
      const sink = new Writable({
        write(piece: Buffer, _enc, done) {
          buffered.push(piece);
          bufferedBytes += piece.length;
          if (bufferedBytes < CHUNK_BYTES) return done();
          flush().then(() => done(), done);
        },
        final(done) {
          if (bufferedBytes === 0) return done();
          flush().then(() => done(), done);
        },
      });
      const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
      let sha256 = '';
      try {
        await pipeline(source, meter, sink);
        sha256 = meter.hash.digest('hex');
        await ctx.run('publishBlob', BLOB_SQL.publish, [
          ctx.now(),
          key,
          upload,
          contentType,
          meter.bytes,
          sha256,
          chunks,
        ]);
      } catch (err) {
        // Best effort: a database that is away now leaves the chunks (invisible: no blob row names them).
        await ctx.run('dropBlobUpload', BLOB_SQL.dropUpload, [upload]).catch(() => undefined);
        if (meter.tooLarge) throw blobTooLarge(options.maxBytes);
        throw err;
      }
      return { key, sizeBytes: meter.bytes, contentType, sha256 };
    },

    async open(ref) {
      const [blob] = await ctx.rows<{ upload_id: string; chunk_count: number }>(
        'selectBlob',
        BLOB_SQL.selectBlob,
        [ref.key],
      );
      if (blob === undefined) throw blobMissing(ref.key);
      async function* chunksOf(upload: string, count: number): AsyncGenerator<Buffer> {
        for (let n = 0; n < count; n++) {
          const [row] = await ctx.rows<{ data: Buffer }>('selectBlobChunk', BLOB_SQL.selectChunk, [
            upload,
            n,
          ]);
          // Removed while being read (its task was re-claimed and the blob replaced).
          if (row === undefined) throw blobMissing(ref.key);
          yield row.data;
        }
      }
      return Readable.from(chunksOf(blob.upload_id, blob.chunk_count), { objectMode: false });
    },

    async remove(key) {
      await ctx.run('removeBlob', BLOB_SQL.remove, [key]);
    },

    async sweep({ olderThanMs }) {
      const age = Math.max(0, Math.floor(olderThanMs));
      const [blobs] = await ctx.rows<{ n: number }>('sweepBlobs', BLOB_SQL.sweepBlobs, [ctx.now(), age]);
      const [unfinished] = await ctx.rows<{ n: number }>('sweepUnfinishedUploads', BLOB_SQL.sweepUnfinished, [
        ctx.now(),
        age,
      ]);
      return { blobs: blobs?.n ?? 0, unfinishedUploads: unfinished?.n ?? 0 };
    },
  };
}
