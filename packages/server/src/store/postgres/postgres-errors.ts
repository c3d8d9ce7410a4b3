/**
 * node-postgres errors → `RouseError`s. The store never lets a raw driver error out for anything a
 * caller can act on: an unreachable, restarting, overloaded or slow database is `unavailable` (503,
 * retry shortly); a constraint is `conflict`, as on SQLite. What is left (a syntax error) is a bug.
 */
import { RouseError, UnavailableError, ValidationError } from '../../core/errors.js';

/** Errors from the wire (Node) rather than from the server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
]);

/** node-postgres reports these without a code. */
const NETWORK_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /connection timeout/i,
  /not queryable/i,
  /cannot use a pool after calling end/i,
  /client was closed/i,
  /query read timeout/i,
];

/** A failure of the connection itself (refused, reset, timed out, closed), by errno code or message. */
export function isConnectionFailure(code: string, message: string): boolean {
  return NETWORK_CODES.has(code) || NETWORK_MESSAGES.some((re) => re.test(message));
}

/**
 * SQLSTATEs meaning "the database cannot serve this right now": connection exceptions (08), server
 * shutting down or starting (57P0x), statement_timeout / cancel (57014), out of resources (53),
 * system errors (58), a read-only standby after failover (25006), auth or a missing database (28, 3D).
 */
function unavailableState(code: string): boolean {
  return (
    code.startsWith('08') ||
    code.startsWith('53') ||
    code.startsWith('57') ||
    code.startsWith('58') ||
    code.startsWith('28') ||
    code === '3D000' ||
    code === '25006' ||
    code === '55P03'
  );
}

/** Deadlock and serialization failure: the statement did nothing and may simply run again. */
export function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/** The unique constraint a unique violation broke, if that is what `err` is. */
export function uniqueViolation(err: unknown): string | null {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' ? String(e.constraint ?? '') : null;
}

/** `err` as the error the store throws. */
export function toStoreError(err: unknown, closed = false): unknown {
  if (err instanceof RouseError) return err;
  if (closed) return new UnavailableError('the store is closed');
  const e = err as { code?: unknown; message?: unknown; constraint?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (/^\d{2}[0-9A-Z]{3}$/.test(code)) {
    if (code.startsWith('23')) {
      return new RouseError(
        'conflict',
        `the write conflicts with existing data: ${message}`,
        { pgCode: code, constraint: e?.constraint ?? null },
        { cause: err },
      );
    }
    if (code === '22P05' || code === '22021' || code === '22003' || code === '22P02') {
      return new ValidationError('value', `cannot be stored in PostgreSQL (${code}): ${message}`);
    }
    if (unavailableState(code)) {
      return new UnavailableError(
        `the PostgreSQL database is unavailable (${code}: ${message}); retry shortly`,
        { pgCode: code },
        { cause: err },
      );
    }
    if (isRetryableConflict(err)) {
      return new RouseError(
        'conflict',
        `the write collided with another one (${code}); retry`,
        { pgCode: code },
        { cause: err },
      );
    }
    return err;
  }
  if (isConnectionFailure(code, message)) {
    return new UnavailableError(
      `the PostgreSQL database is unreachable (${code || message}); retry shortly`,
      { cause: code || message },
      { cause: err },
    );
  }
  return err;
}
