/**
 * The checks `ctx.once` makes on its side, shared by the worker and the test helper: the key and
 * options are refused before any request (the same rules as the protocol's `effectKey`, `claimEffect`
 * and `recordEffect` schemas), and the value `fn` returned must be something the coordinator can record.
 */
import { type Json, MAX_INLINE_RESULT_BYTES } from '@rouse/protocol';
import { InvalidOptionError, NonRetryableError } from '../errors.js';
import type { OnceOptions } from './task-context.js';

/** An effect key: 1 to 200 characters (the protocol's `effectKey` schema). */
export const EFFECT_KEY_MAX_LENGTH = 200;
export const EFFECT_KEY_PATTERN = /^[A-Za-z0-9_.:@-]+$/;
/** The smallest `claimTtlMs` and `ttlMs` the coordinator accepts. */
export const MIN_EFFECT_CLAIM_TTL_MS = 1000;
export const MIN_EFFECT_TTL_MS = 60_000;
const YEAR_MS = 365 * 24 * 3600 * 1000;

/** Throw an {@link InvalidOptionError} naming what is wrong with the arguments of `ctx.once`. */
export function checkOnceArgs(key: unknown, fn: unknown, options: OnceOptions | undefined): void {
  if (
    typeof key !== 'string' ||
    key.length === 0 ||
    key.length > EFFECT_KEY_MAX_LENGTH ||
    !EFFECT_KEY_PATTERN.test(key)
  ) {
    throw new InvalidOptionError(
      'ctx.once(key)',
      `must be 1 to ${EFFECT_KEY_MAX_LENGTH} characters of letters, digits and _ . : @ -`,
      key,
    );
  }
  if (typeof fn !== 'function') {
    throw new InvalidOptionError('ctx.once(key, fn)', 'fn must be a function returning the effect’s result');
  }
  if (options === undefined) return;
  checkDuration('ctx.once options.claimTtlMs', options.claimTtlMs, MIN_EFFECT_CLAIM_TTL_MS);
  checkDuration('ctx.once options.ttlMs', options.ttlMs, MIN_EFFECT_TTL_MS);
}

function checkDuration(option: string, value: unknown, min: number): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > YEAR_MS) {
    throw new InvalidOptionError(
      option,
      `must be an integer number of milliseconds from ${min} to a year`,
      value,
    );
  }
}

/**
 * What `fn` returned, as the coordinator will record it (a JSON copy; `undefined` becomes `null`).
 * A value it cannot record is a {@link NonRetryableError}: the effect already ran, and a retry
 * would run it again only to fail the same way.
 */
export function effectResult(key: string, value: unknown): Json {
  let text: string | undefined;
  try {
    text = JSON.stringify(value === undefined ? null : value);
  } catch (err) {
    throw unrecordable(key, `is not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (text === undefined) throw unrecordable(key, `is not JSON (a ${typeof value})`);
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_INLINE_RESULT_BYTES) {
    throw unrecordable(key, `is ${bytes} bytes of JSON, more than the ${MAX_INLINE_RESULT_BYTES} allowed`);
  }
  return JSON.parse(text) as Json;
}

function unrecordable(key: string, why: string): NonRetryableError {
  return new NonRetryableError(
    `ctx.once(${JSON.stringify(key)}): the effect ran, but what it returned ${why} and cannot be recorded; ` +
      'return a small JSON value (an id, a status) instead',
    { code: 'effect_result_invalid', details: { key } },
  );
}
