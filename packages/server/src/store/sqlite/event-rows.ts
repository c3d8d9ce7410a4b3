/**
 * History entries written as one multi-row INSERT per write (a claim of 16 with start appends 32):
 * one statement execution instead of one per row, with positional parameters. Statements are
 * prepared once per row count and connection.
 */
import type { TaskEvent } from '@rouse/protocol';
import type Database from 'better-sqlite3';
import { jsonText } from './row-mapping.js';

/** Rows per statement: 10 parameters each, far below SQLite's variable limit. */
const CHUNK_ROWS = 64;
const COLUMNS = '(task_id, seq, at, from_status, to_status, version, attempt, actor, reason, details)';
const ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

const cache = new WeakMap<Database.Database, Map<number, Database.Statement>>();

function insertRows(db: Database.Database, rows: number): Database.Statement {
  let byCount = cache.get(db);
  if (byCount === undefined) {
    byCount = new Map();
    cache.set(db, byCount);
  }
  let st = byCount.get(rows);
  if (st === undefined) {
    st = db.prepare(
      `INSERT INTO task_events ${COLUMNS} VALUES ${new Array<string>(rows).fill(ROW).join(', ')}`,
    );
    byCount.set(rows, st);
  }
  return st;
}

/** Collects history entries of one transaction and writes them with as few statements as it can. */
export class EventRows {
  private params: unknown[] = [];
  private rows = 0;

  constructor(private readonly db: Database.Database) {}

  /** Queue `event` of task `taskId`; returns it. */
  add(taskId: string, event: TaskEvent): TaskEvent {
    this.params.push(
      taskId,
      event.seq,
      event.at,
      event.from,
      event.to,
      event.version,
      event.attempt,
      event.actor,
      event.reason,
      jsonText(event.details),
    );
    this.rows++;
    if (this.rows === CHUNK_ROWS) this.flush();
    return event;
  }

  /** Write what was queued (call before the transaction ends). */
  flush(): void {
    if (this.rows === 0) return;
    insertRows(this.db, this.rows).run(this.params);
    this.params = [];
    this.rows = 0;
  }
}
