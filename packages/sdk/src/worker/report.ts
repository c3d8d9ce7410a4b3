/**
 * A report is what an attempt ends with: `complete` (with its result) or `fail` (with its error).
 * It is delivered directly, folded into a claim, or — when the coordinator cannot be reached —
 * kept in the spool in exactly this shape.
 */

import type { Json, TaskError } from '@rouse/protocol';
import { MAX_INLINE_RESULT_BYTES } from '@rouse/protocol';
import type { Client } from '../client.js';
import { isRetryable, NonRetryableError, RouseApiError, WorkerShutdownError } from '../errors.js';

export type Report =
  | { kind: 'complete'; taskId: string; version: number; result?: Json }
  | { kind: 'fail'; taskId: string; version: number; error: TaskError };

/**
 * The coordinator's answer to a report: accepted, or refused with a code (the attempt is superseded);
 * `from` is the task's status when the refusal says (`invalid_transition` from `cancelled`).
 */
export type ReportOutcome = { ok: true } | { ok: false; code: string; from?: string | undefined };

/**
 * Send a report: upload a result over {@link MAX_INLINE_RESULT_BYTES} as a blob first, then complete
 * or fail. A 4xx answer is an outcome (`stale_version`: the lease is gone); retryable errors (the
 * coordinator unreachable after the client's retries) are thrown, for the caller to spool.
 */
export async function deliverReport(client: Client, report: Report): Promise<ReportOutcome> {
  try {
    if (report.kind === 'fail') {
      await client.failTask(report.taskId, { version: report.version, error: report.error });
      return { ok: true };
    }
    let result = report.result;
    if (result !== undefined && isTooLargeInline(result)) {
      await client.uploadResult(report.taskId, report.version, JSON.stringify(result), 'application/json');
      result = undefined;
    }
    await client.completeTask(
      report.taskId,
      result === undefined ? { version: report.version } : { version: report.version, result },
    );
    return { ok: true };
  } catch (err) {
    if (err instanceof RouseApiError && !isRetryable(err)) {
      const from = err.details?.from;
      return typeof from === 'string' ? { ok: false, code: err.code, from } : { ok: false, code: err.code };
    }
    throw err;
  }
}

/** True when the result must be uploaded as a blob rather than sent inline. Cheap for small values. */
export function isTooLargeInline(result: Json): boolean {
  if (result === null || typeof result !== 'object') {
    // a string's UTF-8 size is at most 3 bytes per UTF-16 unit (+2 quotes, +escapes)
    if (typeof result !== 'string' || result.length * 3 < MAX_INLINE_RESULT_BYTES - 64) return false;
  }
  return Buffer.byteLength(JSON.stringify(result)) > MAX_INLINE_RESULT_BYTES;
}

/** The task error a thrown value becomes: `code` from the error or `handler_error`; retryable unless {@link NonRetryableError}. */
export function toTaskError(err: unknown): TaskError {
  const e = err as { code?: unknown; message?: unknown } | null | undefined;
  const code = typeof e?.code === 'string' && e.code.length > 0 ? e.code.slice(0, 128) : 'handler_error';
  const message = String(typeof e?.message === 'string' ? e.message : err).slice(0, 4096);
  const out: TaskError = { code, message, retryable: !(err instanceof NonRetryableError) };
  if (err instanceof NonRetryableError && err.details !== undefined) {
    out.details = JSON.parse(JSON.stringify(err.details)) as TaskError['details'] & object;
  }
  return out;
}

/** The report of an attempt the worker gives up because it stops: retryable `shutdown` (requeued at once). */
export function shutdownReport(taskId: string, version: number): Report {
  const error = { code: 'shutdown', message: new WorkerShutdownError().message, retryable: true };
  return { kind: 'fail', taskId, version, error };
}

/** True when a refused write says the task was cancelled (a beat's `cancelled`, or a report's 409 from it). */
export function refusedAsCancelled(code: string, from: unknown): boolean {
  return code === 'cancelled' || (code === 'invalid_transition' && from === 'cancelled');
}

/** How a spooled report's delivery is told in the `spoolDelivered` event. */
export function spoolOutcome(outcome: ReportOutcome): {
  outcome: 'delivered' | 'superseded' | 'rejected';
  code?: string;
} {
  if (outcome.ok) return { outcome: 'delivered' };
  return { outcome: outcome.code === 'stale_version' ? 'superseded' : 'rejected', code: outcome.code };
}
