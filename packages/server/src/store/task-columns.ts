/**
 * The task row's columns, the same in every backend's schema (SQLite and PostgreSQL migrations), in
 * the order row mappers read them.
 */

/** Every column a `Task` is built from, plus `seq` and `event_count`. */
export const TASK_COLUMN_NAMES = [
  'seq',
  'id',
  'type',
  'status',
  'payload',
  'idempotency_key',
  'priority',
  'run_at',
  'max_attempts',
  'attempt',
  'version',
  'agent_id',
  'resumable',
  'requires',
  'labels',
  'timing',
  'progress',
  'phase',
  'execution_done',
  'checkpoint',
  'session',
  'result',
  'result_ref',
  'error',
  'created_at',
  'claimed_at',
  'started_at',
  'last_heartbeat_at',
  'progress_changed_at',
  'lease_expires_at',
  'next_attempt_at',
  'finished_at',
  // Not part of Task: the seq of the task's last history entry.
  'event_count',
] as const;
