/**
 * The task row's columns, the same in every backend's schema (SQLite and PostgreSQL migrations), in
 * the order row mappers read them; and the task's resolved timing as columns.
 */
import type { Timing } from '@rouse/protocol';

/**
 * A task's resolved timing as columns, each paired with the `Timing` field it holds: milliseconds (the
 * two optional limits null when unset), and the task's own retry backoff as JSON (null: the
 * coordinator's). A JSON object with its six key names cost about 170 bytes in every version of every
 * task row; these take about 30. Inserts and reads list the columns from this one place.
 */
export const TIMING_FIELDS = [
  ['heartbeat_interval_ms', 'heartbeatIntervalMs'],
  ['heartbeat_timeout_ms', 'heartbeatTimeoutMs'],
  ['claim_timeout_ms', 'claimTimeoutMs'],
  ['execution_timeout_ms', 'executionTimeoutMs'],
  ['attempt_deadline_ms', 'attemptDeadlineMs'],
  ['stall_timeout_ms', 'stallTimeoutMs'],
  ['backoff', 'backoff'],
] as const satisfies readonly (readonly [string, keyof Timing])[];

/** The timing columns, in the order every insert and row read lists them. */
export const TIMING_COLUMN_NAMES = TIMING_FIELDS.map(([column]) => column) as unknown as FirstOf<
  typeof TIMING_FIELDS
>;

/** A tuple of pairs → the tuple of their first elements (keeps the column names' literal types). */
type FirstOf<T extends readonly (readonly [string, string])[]> = {
  readonly [K in keyof T]: T[K] extends readonly [infer C, string] ? C : never;
};

/** The timing columns of a row read as an object; `B` is how the backend returns the backoff. */
export interface TimingRow<B> {
  heartbeat_interval_ms: number;
  heartbeat_timeout_ms: number;
  claim_timeout_ms: number;
  execution_timeout_ms: number | null;
  attempt_deadline_ms: number | null;
  stall_timeout_ms: number;
  backoff: B | null;
}

/** A task's timing from its timing columns, the backoff parsed already (null when the task has none). */
export function timingOf(c: Omit<TimingRow<unknown>, 'backoff'>, backoff: Timing['backoff'] | null): Timing {
  return build(
    c.heartbeat_interval_ms,
    c.heartbeat_timeout_ms,
    c.claim_timeout_ms,
    c.execution_timeout_ms,
    c.attempt_deadline_ms,
    c.stall_timeout_ms,
    backoff,
  );
}

/** `timingOf` for a task row read as an array in TASK_COLUMN_NAMES order. */
export function timingInRow(r: readonly unknown[], backoff: Timing['backoff'] | null): Timing {
  const at = TIMING_AT; // the columns follow one another in TIMING_FIELDS order
  return build(
    r[at] as number,
    r[at + 1] as number,
    r[at + 2] as number,
    r[at + 3] as number | null,
    r[at + 4] as number | null,
    r[at + 5] as number,
    backoff,
  );
}

function build(
  heartbeatIntervalMs: number,
  heartbeatTimeoutMs: number,
  claimTimeoutMs: number,
  executionTimeoutMs: number | null,
  attemptDeadlineMs: number | null,
  stallTimeoutMs: number,
  backoff: Timing['backoff'] | null,
): Timing {
  const timing: Timing = {
    heartbeatIntervalMs,
    heartbeatTimeoutMs,
    claimTimeoutMs,
    executionTimeoutMs,
    attemptDeadlineMs,
    stallTimeoutMs,
  };
  if (backoff !== null) timing.backoff = backoff;
  return timing;
}

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
  ...TIMING_COLUMN_NAMES,
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

/** Where the timing columns start in a task row read as an array. */
const TIMING_AT = TASK_COLUMN_NAMES.indexOf(TIMING_COLUMN_NAMES[0]);
