// @ts-check
/**
 * The SQLite background checkpointer's thread (see checkpointer.ts): its own connection to the
 * database file, copying committed WAL frames into the file with `wal_checkpoint(PASSIVE)` every
 * `intervalMs`. PASSIVE takes no writer lock and waits for nothing, so the coordinator's connection
 * keeps committing meanwhile; the checkpoint's page copies and fsyncs happen on this thread instead of
 * inside some request's commit. With nothing new in the WAL a round is a few microseconds and no I/O.
 *
 * Plain JavaScript (not TypeScript) so that the same file runs from src/ in tests and from dist/.
 */
import { workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** @type {{ path: string, intervalMs: number }} */
const { path, intervalMs } = workerData;
const db = new Database(path, { fileMustExist: true });
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
// Runs until the store's close terminates the thread, which closes this connection with it.
setInterval(() => {
  checkpoint.get();
}, intervalMs);
