/**
 * A report is what an attempt ends with: `complete` (with its result) or `fail` (with its error).
 * It is delivered directly, folded into a claim, or — when the coordinator cannot be reached —
 * kept in the spool in exactly this shape.
 */

import type { Json, TaskError } from '@rouse/protocol';
import { MAX_INLINE_RESULT_BYTES } from '@rouse/protocol';
import type { Client } from '../client.js';
import { isRetryable, NonRetryableError, RouseApiError } from '../errors.js';

export type Report =
  | { kind: 'complete'; taskId: string; version: number; result?: Json }
  | { kind: 'fail'; taskId: string; version: number; error: TaskError };

/** The coordinator's answer to a report: accepted, or refused with a code (the attempt is superseded). */
export type ReportOutcome = { ok: true } | { ok: false; code: string };

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
    if (err instanceof RouseApiError && !isRetryable(err)) return { ok: false, code: err.code };
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
