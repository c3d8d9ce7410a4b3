/**
 * History entries written as multi-row INSERTs (a claim of 16 with start appends 32 in one statement
 * execution).
 */
import type { TaskEvent } from '@rouse/protocol';
import type Database from 'better-sqlite3';
import { RowBatch } from './row-batch.js';
import { jsonText } from './row-mapping.js';

/** Collects history entries of one transaction and writes them with as few statements as it can. */
export class EventRows extends RowBatch {
  constructor(db: Database.Database) {
    super(db, {
      into: 'task_events (task_id, seq, at, from_status, to_status, version, attempt, actor, reason, details)',
      row: '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      chunkRows: 64, // 10 parameters each
    });
  }

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
    this.rowAdded();
    return event;
  }
}
