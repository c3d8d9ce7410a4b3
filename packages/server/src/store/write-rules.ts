/**
 * Values a task write computes from the task's current head and the store's clock, shared by every
 * backend so SQLite and PostgreSQL schedule retries and leases identically. Pure: no I/O.
 */
import {
  freshTask,
  type Task,
  type TaskError,
  type TaskEvent,
  type TaskStatus,
  type Timing,
} from '@rouse/protocol';
import { backoffDelayMs, type ResolvedBackoffOptions } from '../core/backoff.js';
import { leaseDeadline } from '../core/timing.js';
import type { ExpiryReason, NewTask, ReleaseAgentTasksInput } from './store.js';

/** Who creates tasks in the history (the API does not tell the store who asked). */
const CREATOR = 'user';

/**
 * A task's first history entry, its creation. It is not stored as a row: everything in it is the
 * task row's own (`created_at`) or fixed, so a create writes one row instead of two, and the entries a
 * task gains when it is claimed append after those of the tasks claimed before it instead of landing
 * beside its creation entry, in the middle of the history. Stores put it first when they read a
 * history that does not start with a stored entry 1 (databases written before keep theirs).
 */
export function creationEntry(createdAt: number): TaskEvent {
  return {
    seq: 1,
    at: createdAt,
    from: null,
    to: 'created',
    version: 0,
    attempt: 0,
    actor: CREATOR,
    reason: 'created',
    details: null,
  };
}

/**
 * A claim that starts the task at once makes two history entries, `X → claimed` and `claimed →
 * running`, written together and equal in all but their seq, states and reason. They are stored as
 * one row: the claim's entry with `to` = `running` (the two entries' ends). No transition goes
 * straight to `running` from anything but `claimed`, so such a row is always this pair, and reading
 * gives both entries back (`storedEntries`). Databases written before keep both rows.
 */
export function claimStartedRow(claim: TaskEvent): TaskEvent {
  return { ...claim, to: 'running' };
}

/** Whether a stored row is a claim and a start in one (see `claimStartedRow`). */
function isClaimStartedRow(row: TaskEvent): boolean {
  return row.to === 'running' && row.from !== 'claimed';
}

/** The history entries one stored row holds, oldest first: itself, or a claim and its start. */
export function storedEntries(row: TaskEvent): TaskEvent[] {
  if (!isClaimStartedRow(row)) return [row];
  return [
    { ...row, to: 'claimed' },
    { ...row, seq: row.seq + 1, from: 'claimed', to: 'running', reason: 'started' },
  ];
}

/** The entry `seq` among what the stored rows `rows` (those at `seq` and `seq - 1`) hold, if any. */
export function storedEntry(rows: readonly TaskEvent[], seq: number): TaskEvent | undefined {
  for (const row of rows) {
    const entry = storedEntries(row).find((e) => e.seq === seq);
    if (entry !== undefined) return entry;
  }
  return undefined;
}

/**
 * One task's history from its stored entries joined to its row, oldest first: no rows when there is
 * no such task, one row with a null `seq` when nothing is stored, each row carrying the task's
 * `created_at`. The creation entry goes first when it is not stored; a claim stored with its start
 * gives both entries.
 */
export function historyOf<R extends { seq: number | null; created_at: number }>(
  rows: readonly R[],
  toEvent: (row: R) => TaskEvent,
): TaskEvent[] {
  const first = rows[0];
  if (first === undefined) return [];
  const stored = first.seq === null ? [] : rows.flatMap((row) => storedEntries(toEvent(row)));
  return first.seq === 1 ? stored : [creationEntry(first.created_at), ...stored];
}

/**
 * A task as its create wrote it: the request's values, status `created`, nothing run yet. Stores
 * build it from what they wrote instead of reading the row back.
 */
export function createdTask(t: NewTask, createdAt: number, runAt: number): Task {
  return freshTask(t, { id: t.id, maxAttempts: t.maxAttempts, timing: t.timing, createdAt, runAt });
}

/** Who an agent is in the event history. */
export function agentActor(agentId: string): string {
  return `agent:${agentId}`;
}

/** The error a task released from its agent times out with (retryable: it goes back to the queue). */
export function releasedTaskError(input: ReleaseAgentTasksInput): TaskError {
  return {
    code: input.reason,
    message:
      input.task === undefined
        ? `agent ${input.agentId} released the task (${input.reason})`
        : `the task was taken from agent ${input.agentId} (${input.reason})`,
    retryable: true,
  };
}

/**
 * When the next attempt may be claimed after attempt `attempt` ended, or null when the task is final
 * (no attempts left, or the error is not retryable). Retry n waits `backoffDelayMs(n)`.
 */
export function nextAttemptAt(
  attempt: number,
  maxAttempts: number,
  retryable: boolean,
  now: number,
  backoff: ResolvedBackoffOptions,
): number | null {
  if (!retryable || attempt >= maxAttempts) return null;
  const random = backoff.jitter > 0 ? Math.random : undefined;
  return now + backoffDelayMs(attempt, backoff, random);
}

/** Why a lease that has passed expired. */
export function expiryReason(
  status: TaskStatus,
  now: number,
  startedAt: number | null,
  timing: Timing,
): ExpiryReason {
  if (status === 'claimed') return 'claim_timeout';
  if (
    timing.attemptDeadlineMs !== null &&
    startedAt !== null &&
    now >= startedAt + timing.attemptDeadlineMs
  ) {
    return 'attempt_deadline';
  }
  return 'heartbeat_timeout';
}

/** The lease a claim grants: the claim timeout, or with `start` the first heartbeat lease. */
export function claimLeaseExpiresAt(now: number, timing: Timing, start: boolean): number {
  return start ? leaseDeadline('start', now, timing, now) : leaseDeadline('claim', now, timing, null);
}

/**
 * The lease after an accepted heartbeat. A running task gets a heartbeat lease (capped by the attempt
 * deadline); a claimed one keeps its claim lease, so a claimed-but-never-started task still times out.
 * The first `executionDone` of an attempt grants the write-back grace once (the lease covers at least
 * `now + writeBackGraceMs`); later beats keep that lease but do not renew the grace, so an agent that
 * stays alive yet never writes back cannot hold the task beyond it by repeating `executionDone`.
 */
export function heartbeatLeaseExpiresAt(input: {
  status: TaskStatus;
  leaseExpiresAt: number;
  startedAt: number | null;
  timing: Timing;
  executionDone: boolean;
  /** `executionDone` as stored before this beat. */
  wasExecutionDone: boolean;
  now: number;
  writeBackGraceMs: number;
}): number {
  if (input.status !== 'running') return input.leaseExpiresAt;
  const lease = leaseDeadline('heartbeat', input.now, input.timing, input.startedAt);
  if (!input.executionDone) return lease;
  if (input.wasExecutionDone) return Math.max(lease, input.leaseExpiresAt);
  return Math.max(lease, input.now + input.writeBackGraceMs);
}

/**
 * The line a store appends to a task's log, once, when the log reaches `maxBytes` and lines are
 * dropped (stream `COORDINATOR_LOG_STREAM`). The task's byte count then passes the cap, which is how
 * the stores know it is written.
 */
export function logCapNotice(maxBytes: number): string {
  return `[rouse] this task's log reached its cap of ${maxBytes} bytes: later lines were dropped`;
}
