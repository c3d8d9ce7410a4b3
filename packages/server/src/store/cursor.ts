/**
 * Opaque page cursors for `listTasks`: the insertion sequence of the last task on the page. Encoded so
 * that callers do not build them by hand; every backend uses the same format.
 */
import { ValidationError } from '../core/errors.js';

const PREFIX = 'seq:';

export function encodeCursor(seq: number): string {
  return Buffer.from(`${PREFIX}${seq}`, 'utf8').toString('base64url');
}

/** The sequence the next page starts below. Throws `validation_failed` for a cursor we did not issue. */
export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const seq = text.startsWith(PREFIX) ? Number(text.slice(PREFIX.length)) : Number.NaN;
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new ValidationError('cursor', 'must be a nextCursor returned by a previous page');
  }
  return seq;
}
