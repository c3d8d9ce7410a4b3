/**
 * The one place where a refused task write becomes an error, shared by every backend so SQLite and
 * PostgreSQL answer identically. Backends run their conditional write; when it changes nothing they
 * read the task's head and ask `writeError` why.
 *
 * Check order (store.ts): task exists (`not_found`), version current (`stale_version`), writer holds
 * the task (`forbidden`), then the transition is allowed (`invalid_transition`).
 */
import type { JsonObject, TaskStatus } from '@rouse/protocol';
import { InvalidTransitionError, NotFoundError, RouseError, StaleVersionError } from '../core/errors.js';
import { canTransition, HELD_STATUSES, isFinal } from '../core/transitions.js';
import type { Outcome } from './store.js';

/** What a backend knows about the task when it checks a write. */
export interface TaskHead {
  id: string;
  status: TaskStatus;
  version: number;
  agentId: string | null;
  nextAttemptAt: number | null;
}

/** The columns a head is read from, as both backends' rows name them. */
export interface HeadColumns {
  id: string;
  status: TaskStatus;
  version: number;
  agent_id: string | null;
  next_attempt_at: number | null;
}

/** A task row's head (what `writeError` and `checkWrite` look at); null for a task that does not exist. */
export function toHead(row: HeadColumns | undefined): TaskHead | null {
  if (row === undefined) return null;
  return {
    id: row.id,
    status: row.status,
    version: row.version,
    agentId: row.agent_id,
    nextAttemptAt: row.next_attempt_at,
  };
}

/**
 * The write that was attempted:
 * - `transition`: move to `to`; must be in the core table and the task must not be final.
 * - `hold`: a write that keeps the status (heartbeat, checkpoint, logs, result ref); the task must be
 *   claimed or running. Refused as `invalid_transition` from the current status to `running`.
 * - `retry`: a manual retry; the task must be a final `failed` or `timeout`.
 */
export type WriteKind = { kind: 'transition'; to: TaskStatus } | { kind: 'hold' } | { kind: 'retry' };

export type AttemptedWrite = WriteKind & {
  taskId: string;
  /** Agent writes carry the fencing token; admin writes omit it. */
  version?: number | undefined;
  /** Agent writes name the writer; admin writes omit it. */
  agentId?: string | undefined;
};

/** Why `write` cannot apply to `head`, or null when it can. */
export function checkWrite(head: TaskHead | null, write: AttemptedWrite): RouseError | null {
  if (head === null) return new NotFoundError('task', write.taskId);
  if (write.version !== undefined && write.version !== head.version) {
    return new StaleVersionError(head.id, write.version, head.version, head.status);
  }
  if (write.agentId !== undefined && head.agentId !== write.agentId) {
    return new RouseError(
      'forbidden',
      `task ${head.id} is held by ${head.agentId ?? 'no agent'}, not ${write.agentId}: an agent may only write to tasks it holds`,
      { taskId: head.id, agentId: write.agentId },
    );
  }
  switch (write.kind) {
    case 'hold':
      return HELD_STATUSES.includes(head.status)
        ? null
        : new InvalidTransitionError(
            head.id,
            head.status,
            'running',
            'the task is no longer held; drop the work',
          );
    case 'retry':
      return (head.status === 'failed' || head.status === 'timeout') && head.nextAttemptAt === null
        ? null
        : new InvalidTransitionError(
            head.id,
            head.status,
            'claimed',
            '',
            `task ${head.id} cannot be retried: it is ${head.status}${(head.status === 'failed' || head.status === 'timeout') && head.nextAttemptAt !== null ? ' and will be retried by itself' : ''}; only a final failed or timeout task can be retried by hand`,
          );
    case 'transition':
      if (isFinal(head.status, head.nextAttemptAt)) {
        return new InvalidTransitionError(head.id, head.status, write.to, 'the task is final');
      }
      return canTransition(head.status, write.to)
        ? null
        : new InvalidTransitionError(head.id, head.status, write.to);
  }
}

/**
 * The error for a conditional write that changed nothing. When the head passes every check the row
 * moved between the read and the write (another coordinator): `conflict`, safe to retry.
 */
export function writeError(head: TaskHead | null, write: AttemptedWrite): RouseError {
  return (
    checkWrite(head, write) ??
    new RouseError('conflict', `task ${write.taskId} changed while it was being written; retry`, {
      taskId: write.taskId,
    })
  );
}

/** A batch item's failure outcome. Non-Rouse errors are bugs and are rethrown. */
export function failedOutcome(err: unknown): Outcome<never> {
  if (!(err instanceof RouseError)) throw err;
  return { ok: false, code: err.code, message: err.message, details: err.details as JsonObject };
}

/** An effect key's record refused: the claim that ran the effect no longer holds the key. */
export function effectClaimLapsed(taskId: string, key: string): RouseError {
  return new RouseError(
    'conflict',
    `the claim on effect key ${key} of task ${taskId} is no longer held (it lapsed, was released or expired); claim the key again`,
    { taskId, key },
  );
}

/**
 * An exclusive registration (`NewAgent.exclusive`) found the key's current incarnation still live:
 * both backends refuse with this error.
 */
export function keyInUseError(
  key: string,
  holder: { id: string; incarnation: number; leaseExpiresAt: number | null },
): RouseError {
  return new RouseError(
    'agent_key_in_use',
    `agent key ${key} is held by agent ${holder.id} (incarnation ${holder.incarnation}), which is still live: stop it first, or wait for its lease to run out (a supervisor that was killed leaves its name held until then)`,
    { key, agentId: holder.id, incarnation: holder.incarnation, leaseExpiresAt: holder.leaseExpiresAt },
  );
}
