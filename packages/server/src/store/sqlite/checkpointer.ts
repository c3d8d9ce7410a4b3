/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit
 * crosses the WAL threshold: that commit copies every page written since the last one into the
 * database file and fsyncs both files while the coordinator's one thread waits — on a busy agent
 * fleet a stall of 10–20 ms every second or so, which was most of the heartbeat latency tail.
 *
 * So a file database gets a checkpoint thread (checkpoint-worker.mjs) with a connection of its own
 * that copies committed frames continually, without blocking writers. Only a checkpoint that finds
 * nothing left to copy lets the next commit restart the WAL from its beginning, and under sustained
 * writes the thread's never quite does; so the coordinator's connection still checkpoints itself,
 * past a much larger WAL (`SAFETY_NET_PAGES`): by then the thread has copied nearly everything, the
 * commit copies the rest, and the WAL restarts. If the thread fails or exits, the connection goes
 * back to SQLite's usual threshold. On close the thread stops first, so the coordinator's
 * connection is the last one and checkpoints and removes the WAL as usual.
 */
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** WAL pages SQLite checkpoints at by default (its `wal_autocheckpoint`). */
const SQLITE_DEFAULT_PAGES = 1000;
/** The coordinator's connection checkpoints itself only past this many pages (~40 MiB). */
const SAFETY_NET_PAGES = 10_000;

export interface Checkpointer {
  /** Stop the thread and close its connection. */
  close(): Promise<void>;
}

/**
 * Checkpoint `path` (in WAL mode, opened by `db`) every `intervalMs` from a thread that starts after
 * the first interval (a database opened and closed at once costs no thread).
 */
export function startCheckpointer(db: Database.Database, path: string, intervalMs: number): Checkpointer {
  db.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
  let running = true;
  let worker: Worker | null = null;
  const fallBack = (): void => {
    if (!running) return;
    running = false;
    if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`);
  };
  const start = setTimeout(() => {
    worker = new Worker(new URL('./checkpoint-worker.mjs', import.meta.url), {
      workerData: { path, intervalMs },
    });
    worker.unref();
    worker.on('error', fallBack);
    worker.on('exit', fallBack);
  }, intervalMs);
  start.unref();
  return {
    async close() {
      running = false;
      clearTimeout(start);
      // Safe mid-checkpoint: termination waits for the native call, and the thread's connection
      // is closed as it ends; a checkpoint is crash-safe anyway.
      await worker?.terminate();
    },
  };
}
