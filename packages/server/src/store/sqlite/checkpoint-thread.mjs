/**
 * The SQLite checkpoint thread: the body of the worker thread that `WalCheckpointer`
 * (wal-checkpointer.ts) starts. It holds its own connection to the database file and copies the WAL
 * into it while the coordinator's thread goes on serving requests. Plain JavaScript because Node starts
 * a worker thread from a file, and this one must run from the sources (tests) as from the build.
 *
 * The loop sleeps until the coordinator commits, lets commits gather for `gatherMs`, then checkpoints
 * when the WAL holds `thresholdFrames` frames not yet copied into the database file. Nothing runs while
 * nothing is written: an idle coordinator wakes this thread never.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { workerData } from 'node:worker_threads';

/** @type {{ path: string, signals: SharedArrayBuffer, slot: Record<string, number>, gatherMs: number, thresholdFrames: number }} */
const { path, signals, slot, gatherMs, thresholdFrames } = workerData;
const words = new Int32Array(signals);
// The coordinator's thread waits for this (see wal-checkpointer.ts); the driver loads after it.
Atomics.store(words, slot.started, 1);
Atomics.notify(words, slot.started);
const { default: Database } = await import('better-sqlite3');
const stopping = () => Atomics.load(words, slot.stop) === 1;

// The WAL index (the -shm file) starts with its header; `mxFrame` (frames in the WAL) is the u32 at
// byte 16 and the checkpoint record's `nBackfill` (frames already copied) the u32 at byte 96, both in
// the machine's byte order (https://sqlite.org/walformat.html, "The WAL-Index Header").
const header = Buffer.alloc(100);
const u32 = endianness() === 'LE' ? (at) => header.readUInt32LE(at) : (at) => header.readUInt32BE(at);
let shm = -1;

/** Frames in the WAL not yet copied into the database file; Infinity when the index cannot be read. */
function pendingFrames() {
  try {
    if (shm < 0) shm = openSync(`${path}-shm`, 'r');
    if (readSync(shm, header, 0, header.length, 0) < header.length) return Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
  const mxFrame = u32(16);
  const nBackfill = u32(96);
  return mxFrame >= nBackfill ? mxFrame - nBackfill : Number.POSITIVE_INFINITY;
}

const db = new Database(path, { timeout: 0 });
try {
  // Checkpoints sync as the coordinator's own would: the WAL before copying, the file after.
  db.pragma('synchronous = NORMAL');
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  // The first round looks without waiting for a commit: those made while this thread started did not wake it.
  for (let round = 0; ; round++) {
    if (round > 0) {
      Atomics.store(words, slot.idle, 1);
      while (Atomics.load(words, slot.idle) === 1 && !stopping()) Atomics.wait(words, slot.idle, 1);
    }
    if (stopping()) break;
    Atomics.wait(words, slot.stop, 0, gatherMs);
    if (stopping()) break;
    if (pendingFrames() < thresholdFrames) continue;
    checkpoint.get();
    Atomics.add(words, slot.checkpoints, 1);
  }
} finally {
  if (shm >= 0) closeSync(shm);
  db.close();
}
