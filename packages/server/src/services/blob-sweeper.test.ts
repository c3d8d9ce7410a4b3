/**
 * The blob sweeper's schedule: a sweep every interval with the configured age, again after a failed
 * one, none after stop, and nothing at all for a blob store that does not sweep; and a coordinator
 * wired to sweep on either store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { freshSchema } from '../../../../test/harness/postgres.js';
import { ManualClock } from '../core/clock.js';
import { UnavailableError } from '../core/errors.js';
import type { BlobStore } from '../store/blobs.js';
import { createPostgresStore } from '../store/postgres/postgres-store.js';
import { createFixture, TOKENS } from '../test-support/coordinator-fixture.js';
import { createBlobSweeper } from './blob-sweeper.js';
import { createCoordinator } from './create-coordinator.js';

const logger = pino({ level: 'silent' });
const turn = () => new Promise((r) => setImmediate(r));

/** A blob store that only records its sweeps (the sweep itself: store/blob-stores.test.ts). */
function sweeping(results: (() => { blobs: number; unfinishedUploads: number })[]) {
  const calls: number[] = [];
  const blobs = {
    async sweep({ olderThanMs }: { olderThanMs: number }) {
      calls.push(olderThanMs);
      return (results.shift() ?? (() => ({ blobs: 0, unfinishedUploads: 0 })))();
    },
  } as unknown as BlobStore;
  return { blobs, calls };
}

describe('blob sweeper', () => {
  it('sweeps every interval with the configured age, keeps going after a failure, stops on stop', async () => {
    const clock = new ManualClock(0);
    const store = sweeping([
      () => ({ blobs: 2, unfinishedUploads: 1 }),
      () => {
        throw new UnavailableError('the database is away');
      },
    ]);
    const sweeper = createBlobSweeper({
      blobs: store.blobs,
      clock,
      logger,
      intervalMs: 1000,
      olderThanMs: 5000,
    });
    sweeper.start();
    clock.advance(999);
    await turn();
    expect(store.calls).toEqual([]);
    clock.advance(1);
    await turn();
    expect(store.calls).toEqual([5000]);
    clock.advance(1000); // this one fails
    await turn();
    clock.advance(1000); // and the schedule goes on
    await turn();
    expect(store.calls).toEqual([5000, 5000, 5000]);
    sweeper.stop();
    clock.advance(10_000);
    await turn();
    expect(store.calls).toHaveLength(3);
    expect(await sweeper.sweep()).toEqual({ blobs: 0, unfinishedUploads: 0 });
  });

  it('leaves a blob store without a sweep alone', async () => {
    const clock = new ManualClock(0);
    const blobs = {} as BlobStore;
    const sweeper = createBlobSweeper({ blobs, clock, logger, intervalMs: 1000, olderThanMs: 5000 });
    sweeper.start();
    clock.advance(5000);
    expect(await sweeper.sweep()).toBeNull();
    sweeper.stop();
  });

  it('a coordinator sweeps its blobs, in PostgreSQL and in files (SQLite)', async () => {
    const db = await freshSchema('sweeper');
    const dir = await mkdtemp(join(tmpdir(), 'rouse-sweeper-'));
    const clock = new ManualClock(1_700_000_000_000);
    const store = await createPostgresStore({
      connectionString: db.connectionString,
      schema: db.schema,
      clock,
    });
    const coordinator = createCoordinator({
      store,
      clock,
      logger,
      blobDir: join(dir, 'blobs'),
      tokens: TOKENS,
    });
    const sqlite = await createFixture();
    try {
      await coordinator.start();
      expect(await coordinator.sweepBlobsNow()).toEqual({ blobs: 0, unfinishedUploads: 0 });
      expect(await sqlite.coordinator.sweepBlobsNow()).toEqual({ blobs: 0, unfinishedUploads: 0 });
    } finally {
      await coordinator.stop();
      await store.close();
      await sqlite.close();
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
