import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from '../../../../../test/harness/wait.js';
import { walIndex } from '../../test-support/wal-index.js';
import { WalCheckpointer } from './wal-checkpointer.js';

/** Wait (at most 5 s) until `done()`; fails the test if it never is. */
const eventually = (done: () => boolean, what: string) =>
  waitFor(done, { timeoutMs: 5000, intervalMs: 10, what });

describe('WalCheckpointer', () => {
  let dir: string;
  let path: string;
  let db: Database.Database;
  const onFailure = vi.fn();

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rouse-ckpt-'));
    path = join(dir, 'test.db');
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    // This connection never checkpoints: whatever is copied, the thread copied.
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    onFailure.mockReset();
  });
  afterEach(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Commit `n` rows of about one page each, one transaction per row, telling `ckpt` of each. */
  const commitPages = (ckpt: WalCheckpointer, n: number): void => {
    const insert = db.prepare('INSERT INTO rows (body) VALUES (?)');
    for (let i = 0; i < n; i++) {
      insert.run('x'.repeat(3000));
      ckpt.committed();
    }
  };

  it('copies the WAL into the database file from its own thread once enough frames wait', async () => {
    const ckpt = new WalCheckpointer({ path, thresholdFrames: 40, gatherMs: 5, onFailure });
    try {
      commitPages(ckpt, 100);
      expect(walIndex(path).copied).toBe(0);
      await eventually(() => walIndex(path).copied > 0, 'frames copied into the file');
      expect(ckpt.checkpoints).toBeGreaterThan(0);
      // The copy is the real one: the file alone, without its WAL, holds the rows.
      expect(db.prepare('SELECT count(*) AS n FROM rows').get()).toEqual({ n: 100 });
    } finally {
      await ckpt.stop();
    }
    expect(onFailure).not.toHaveBeenCalled();
  });

  it('leaves fewer frames than its threshold alone, and does nothing while nothing is committed', async () => {
    const ckpt = new WalCheckpointer({ path, thresholdFrames: 200, gatherMs: 5, onFailure });
    try {
      await new Promise((r) => setTimeout(r, 100));
      commitPages(ckpt, 20);
      await new Promise((r) => setTimeout(r, 200));
      expect(ckpt.checkpoints).toBe(0);
      expect(walIndex(path).copied).toBe(0);
      commitPages(ckpt, 200);
      await eventually(() => ckpt.checkpoints > 0, 'a checkpoint');
    } finally {
      await ckpt.stop();
    }
  });

  it('stops with its connection closed: the last connection to close removes the WAL', async () => {
    const ckpt = new WalCheckpointer({ path, thresholdFrames: 10, gatherMs: 5, onFailure });
    commitPages(ckpt, 30);
    await eventually(() => ckpt.checkpoints > 0, 'a checkpoint');
    await ckpt.stop();
    db.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(onFailure).not.toHaveBeenCalled();
  });

  it('reports a thread that stopped on its own', async () => {
    const failed = new Promise<Error>((resolve) => {
      const ckpt = new WalCheckpointer({
        path: join(dir, 'missing', 'x.db'),
        thresholdFrames: 10,
        gatherMs: 5,
        onFailure: resolve,
      });
      ckpt.committed();
    });
    expect((await failed).message).toMatch(/directory does not exist|unable to open/);
  });
});
