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

/**
 * True when the result must be uploaded as a blob rather than sent inline. Cheap for small values.
 * Throws a {@link NonRetryableError} (`result_invalid`) for a value JSON cannot carry — a cycle, a
 * BigInt, a bare function or symbol, a `toJSON` that throws: the task then fails for good, since
 * every retry would return the same kind of value.
 */
export function isTooLargeInline(result: Json): boolean {
  const type = typeof result;
  if (result === null || type === 'number' || type === 'boolean') return false;
  // a string's UTF-8 size is at most 3 bytes per UTF-16 unit (+2 quotes, +escapes)
  if (type === 'string' && (result as string).length * 3 < MAX_INLINE_RESULT_BYTES - 64) return false;
  let text: string | undefined;
  try {
    text = JSON.stringify(result);
  } catch (err) {
    throw invalidResult(err instanceof Error ? err.message : describeThrown(err));
  }
  if (text === undefined) throw invalidResult(`a ${type} is not JSON`);
  return Buffer.byteLength(text) > MAX_INLINE_RESULT_BYTES;
}

function invalidResult(why: string): NonRetryableError {
  return new NonRetryableError(
    `the handler's result cannot be sent as JSON (${why}); return plain JSON: objects, arrays, ` +
      'strings, numbers, booleans or null',
    { code: 'result_invalid' },
  );
}

/** The task error a thrown value becomes: `code` from the error or `handler_error`; retryable unless {@link NonRetryableError}. */
export function toTaskError(err: unknown): TaskError {
  const e = err as { code?: unknown; message?: unknown } | null | undefined;
  const code = typeof e?.code === 'string' && e.code.length > 0 ? e.code.slice(0, 128) : 'handler_error';
  let message = typeof e?.message === 'string' ? e.message : describeThrown(err);
  let details: TaskError['details'];
  if (err instanceof NonRetryableError && err.details !== undefined) {
    try {
      details = JSON.parse(JSON.stringify(err.details)) as TaskError['details'];
    } catch (cause) {
      message += ` (its details were dropped: ${cause instanceof Error ? cause.message : String(cause)})`;
    }
  }
  const out: TaskError = {
    code,
    message: message.slice(0, 4096),
    retryable: !(err instanceof NonRetryableError),
  };
  if (details !== undefined) out.details = details;
  return out;
}

/** `String(thrown)`, which itself throws for an object without a prototype or a throwing `toString`. */
function describeThrown(thrown: unknown): string {
  try {
    return String(thrown);
  } catch {
    return Object.prototype.toString.call(thrown);
  }
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
