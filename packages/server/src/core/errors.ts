/**
 * One error type with stable codes. Services and stores throw these; the API's single error handler
 * maps `code` to an HTTP status (docs/protocol.md "Errors"). Messages tell the reader what to do next.
 */
import { ERROR_STATUS, type ErrorCode, type TaskStatus } from '@rouse/protocol';

export class RouseError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  /** `options.cause`: the lower-level error this one stands for (kept for logs and diagnostics). */
  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RouseError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** A write carried a version that is not the task's current one; nothing changed. */
export class StaleVersionError extends RouseError {
  readonly taskId: string;
  readonly currentVersion: number;
  readonly currentStatus: TaskStatus;

  constructor(taskId: string, sentVersion: number, currentVersion: number, status: TaskStatus) {
    super(
      'stale_version',
      `task ${taskId} is at version ${currentVersion} (${status}), not ${sentVersion}: this agent no longer holds it; drop the work`,
      { taskId, sentVersion, currentVersion, status },
    );
    this.taskId = taskId;
    this.currentVersion = currentVersion;
    this.currentStatus = status;
  }
}

/** The requested transition is not in the table of docs/design.md §2. */
export class InvalidTransitionError extends RouseError {
  readonly from: TaskStatus;
  readonly to: TaskStatus;

  constructor(taskId: string, from: TaskStatus, to: TaskStatus, hint = '', message?: string) {
    super(
      'invalid_transition',
      message ?? `task ${taskId} cannot go from ${from} to ${to}${hint ? `: ${hint}` : ''}`,
      {
        taskId,
        from,
        to,
      },
    );
    this.from = from;
    this.to = to;
  }
}

export class NotFoundError extends RouseError {
  constructor(
    kind: 'task' | 'agent' | 'result' | 'route' | 'dependency' | 'intervention' | 'alert',
    id: string,
  ) {
    super('not_found', `${kind} ${id} not found`, { kind, id });
  }
}

/** Invalid options or input, naming the field and the rule. */
export class ValidationError extends RouseError {
  constructor(field: string, rule: string) {
    super('validation_failed', `${field} ${rule}`, { issues: [{ path: field, message: rule }] });
  }
}

export class IdempotencyConflictError extends RouseError {
  constructor(key: string, existingTaskId: string) {
    super(
      'idempotency_conflict',
      `idempotencyKey ${JSON.stringify(key)} already names task ${existingTaskId} with a different type or payload; use a new key`,
      { idempotencyKey: key, taskId: existingTaskId },
    );
  }
}

export class UnavailableError extends RouseError {
  constructor(
    message = 'the store is unreachable; retry shortly',
    details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super('unavailable', message, details, options);
  }
}

export function isRouseError(err: unknown): err is RouseError {
  return err instanceof RouseError;
}
