/** New task rows written as multi-row INSERTs (a batch create of 1,000 is 16 statement executions). */
import type Database from 'better-sqlite3';
import type { NewTask } from '../store.js';
import { TIMING_COLUMN_NAMES, TIMING_FIELDS } from '../task-columns.js';
import { RowBatch } from './row-batch.js';
import { jsonText } from './row-mapping.js';

/** Collects the new tasks of one transaction. */
export class TaskRows extends RowBatch {
  constructor(db: Database.Database) {
    super(db, {
      into: `tasks (id, type, status, payload, idempotency_key, priority, run_at, max_attempts, resumable,
                    requires, labels, ${TIMING_COLUMN_NAMES.join(', ')}, created_at, shard)`,
      row: "(?, ?, 'created', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      chunkRows: 64, // 19 parameters each
    });
  }

  /** Queue task `t`, its payload already JSON text. */
  add(t: NewTask, payload: string, runAt: number, createdAt: number, shard: number): void {
    this.params.push(
      t.id,
      t.type,
      payload,
      t.idempotencyKey,
      t.priority,
      runAt,
      t.maxAttempts,
      t.resumable ? 1 : 0,
      JSON.stringify(t.requires),
      JSON.stringify(t.labels),
      ...TIMING_FIELDS.map(([, field]) =>
        field === 'backoff' ? jsonText(t.timing.backoff) : t.timing[field],
      ),
      createdAt,
      shard,
    );
    this.rowAdded();
  }
}
