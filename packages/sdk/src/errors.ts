/**
 * The SDK's errors. Everything the SDK throws on purpose is a {@link RouseSdkError}, so callers can
 * tell "Rouse said no" ({@link RouseApiError}), "Rouse could not be reached" ({@link RouseNetworkError})
 * and "the task was taken away" ({@link LeaseLostError}, {@link TaskCancelledError}, ...) apart.
 */
/** Base class of every error the SDK throws on purpose. `code` is stable; `message` is for humans. */
export class RouseSdkError extends Error {
  /** A stable, machine-readable code (`invalid_option`, `timeout`, `stale_version`, ...). */
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    message: string,
    options: { code: string; details?: Record<string, unknown>; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.details = options.details;
  }
}

/** An option was missing or had a bad value. The message names the option and the rule. */
export class InvalidOptionError extends RouseSdkError {
  constructor(option: string, rule: string, value?: unknown) {
    super(`${option} ${rule}${value === undefined ? '' : ` (got ${describe(value)})`}`, {
      code: 'invalid_option',
      details: { option, rule },
    });
  }
}

/**
 * The coordinator answered with a non-2xx status and an error body
 * (`{"error": {"code", "message", "details"}}`, docs/protocol.md "Errors"). `code` is one of the
 * protocol's `ERROR_CODES` when the server is Rouse.
 */
export class RouseApiError extends RouseSdkError {
  /** HTTP status code. */
  readonly status: number;
  constructor(status: number, code: string, message: string, details?: Record<string, unknown>) {
    super(message, details === undefined ? { code } : { code, details });
    this.status = status;
  }
}

/**
 * The coordinator could not be reached, the request timed out (`code: 'timeout'`), or a proxy in front
 * of it answered 502/503/504 without a Rouse error body. Always worth retrying.
 */
export class RouseNetworkError extends RouseSdkError {
  /** HTTP status when a proxy answered, else undefined. */
  readonly status: number | undefined;

  constructor(message: string, options: { code?: string; status?: number; cause?: unknown } = {}) {
    super(message, { code: options.code ?? 'network_error', cause: options.cause });
    this.status = options.status;
  }
}

/**
 * Throw this from a handler to fail the task without retry (the failure is final at once), like
 * BullMQ's `UnrecoverableError` or Temporal's `ApplicationFailure.nonRetryable`.
 *
 * @example
 * if (!payload.repo) throw new NonRetryableError('payload.repo is required', { code: 'bad_payload' });
 */
export class NonRetryableError extends RouseSdkError {
  constructor(message: string, options: { code?: string; details?: Record<string, unknown> } = {}) {
    super(
      message,
      options.details === undefined
        ? { code: options.code ?? 'non_retryable' }
        : { code: options.code ?? 'non_retryable', details: options.details },
    );
  }
}

/**
 * The reason `ctx.signal` aborts when the worker learns that its lease on the task is gone (a heartbeat
 * or a write answered `stale_version`, `not_found` or `forbidden`; or `unauthorized`: the coordinator
 * refused the agent's token, and the worker stops). Another attempt may already be running elsewhere:
 * stop work, the runtime will not report anything for this attempt.
 */
export class LeaseLostError extends RouseSdkError {
  readonly taskId: string;
  readonly version: number;

  constructor(taskId: string, version: number, code = 'stale_version') {
    super(
      `lease on task ${taskId} (version ${version}) is lost: ${code}; stop work, the result will be dropped`,
      {
        code,
        details: { taskId, version },
      },
    );
    this.taskId = taskId;
    this.version = version;
  }
}

/** The reason `ctx.signal` aborts when the task was cancelled (a `cancel` command). Nothing is reported. */
export class TaskCancelledError extends RouseSdkError {
  readonly taskId: string;
  constructor(taskId: string, reason?: string) {
    super(`task ${taskId} was cancelled${reason ? `: ${reason}` : ''}`, {
      code: 'cancelled',
      details: { taskId },
    });
    this.taskId = taskId;
  }
}

/** The reason `ctx.signal` aborts when the attempt ran past `timing.executionTimeoutMs`. */
export class ExecutionTimeoutError extends RouseSdkError {
  readonly taskId: string;
  constructor(taskId: string, executionTimeoutMs: number) {
    super(`task ${taskId} ran past its executionTimeoutMs of ${executionTimeoutMs} ms`, {
      code: 'execution_timeout',
      details: { taskId, executionTimeoutMs },
    });
    this.taskId = taskId;
  }
}

/** The reason `ctx.signal` aborts when the worker stops before the handler finished. The task is requeued. */
export class WorkerShutdownError extends RouseSdkError {
  constructor(
    message = 'the worker is shutting down; the task is handed back to the queue when the agent leaves',
  ) {
    super(message, { code: 'shutdown' });
  }
}

/** HTTP statuses that mean "try again later" rather than "no". */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/**
 * True for errors that a retry may cure: network failures, timeouts, `429 rate_limited` and
 * `502/503/504`. False for everything else (a 4xx is an answer, not an accident).
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof RouseNetworkError) return true;
  if (err instanceof RouseApiError) return RETRYABLE_STATUSES.has(err.status);
  return false;
}

/**
 * Network failures that happen before a connection exists: refused, no route, an unknown host. The
 * request never reached the coordinator.
 */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * True when the call provably did nothing: no connection to the coordinator could be made, or the
 * coordinator refused the call before acting on it (`503` with `details.applied: false`, as while it
 * shuts down). Such a call is safe to send again even when it is not idempotent (a create without an
 * `idempotencyKey`, a cancel). A reset connection or a timeout is not one of these: the call may have
 * been done.
 */
export function wasNotApplied(err: unknown): boolean {
  if (err instanceof RouseNetworkError) return NOT_CONNECTED.has(err.code);
  if (err instanceof RouseApiError) return err.status === 503 && err.details?.applied === false;
  return false;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  // JSON would say null for these, and 10n would throw.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The coordinator refused the agent's own token (401): a newer incarnation of the slot registered
 * with the same key, or the agent was ended. The process should stop: its tasks are no longer its.
 */
export function isTokenRefused(err: unknown): boolean {
  return err instanceof RouseApiError && err.status === 401;
}
