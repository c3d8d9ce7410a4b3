/**
 * One coordinator per SQLite file. A second `rouse serve` on the same database would run beside the
 * first without either knowing of the other's new tasks (on SQLite, claim wake-ups stay in the
 * process), and each would overwrite the other's server.json. So a coordinator holds an exclusive
 * lock on a small companion file, `<database>-serve.lock`, for as long as it serves: SQLite's own file
 * lock, which the operating system drops when the process ends however it ends (SIGKILL included), so
 * a restart after a crash never waits. Other tools (`rouse migrate`, a backup) open the database
 * itself and are not held back.
 *
 * SQLite keeps the lock per connection, within one process as across processes: two servers started
 * in one process on one file are refused the same way.
 */
import Database from 'better-sqlite3';
import { RouseError, UnavailableError } from '../../core/errors.js';

export interface ServeLock {
  /** The lock file's path. */
  readonly file: string;
  /** Give the lock up (the file stays: removing it would race with a coordinator taking it). */
  release(): void;
}

/** The lock file of database `path`. */
export const serveLockFile = (path: string): string => `${path}-serve.lock`;

/**
 * Take the serving lock of database `path`, or throw `conflict` when another process holds it
 * (`holder` says who, when the caller knows: "pid 123, http://127.0.0.1:7070").
 */
export function lockSqliteForServing(path: string, holder?: () => string | null): ServeLock {
  const file = serveLockFile(path);
  let db: Database.Database;
  try {
    db = new Database(file, { timeout: 0 });
  } catch (err) {
    throw new UnavailableError(
      `cannot open the SQLite database ${path} (its lock file ${file}): ${(err as Error).message}`,
      { path, lockFile: file },
    );
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // Held until this connection closes: the transaction is never committed and writes nothing.
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if (err instanceof Database.SqliteError && err.code === 'SQLITE_BUSY') {
      const who = holder?.() ?? null;
      throw new RouseError(
        'conflict',
        `another coordinator${who ? ` (${who})` : ''} is serving the SQLite database ${path}: a SQLite database has one coordinator. Stop that one, or give this one another --data-dir; coordinators that share work share a PostgreSQL store (--store postgres://…)`,
        { path, lockFile: file },
      );
    }
    throw new UnavailableError(
      `cannot lock the SQLite database ${path} (its lock file ${file}): ${(err as Error).message}`,
      { path, lockFile: file },
    );
  }
  return {
    file,
    release() {
      if (db.open) db.close();
    },
  };
}
