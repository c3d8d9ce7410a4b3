/**
 * Retry policy for transient failures (network errors, timeouts, 429, 502/503/504): exponential
 * backoff with jitter, `baseDelayMs × 2^(n-1)` capped at `maxDelayMs`.
 */
import { InvalidOptionError } from './errors.js';

/** How transient failures are retried. */
export interface RetryOptions {
  /** Tries in total, the first included; `1` disables retries. @default 4 */
  attempts?: number;
  /** Delay before the first retry. @default 100 */
  baseDelayMs?: number;
  /** Upper bound of any one delay. @default 2000 */
  maxDelayMs?: number;
  /**
   * How long a create, a cancel, a retry or a command keeps being sent again, counted from its first
   * failure, while each failure proves the call did nothing (no connection could be made, or a
   * coordinator shutting down refused it): long enough to ride out a coordinator's restart. Such
   * calls are sent again within `attempts` either way; `0` stops there. @default 10000
   */
  unreachableForMs?: number;
}

export interface ResolvedRetryOptions {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  unreachableForMs: number;
}

export const RETRY_DEFAULTS: Readonly<ResolvedRetryOptions> = Object.freeze({
  attempts: 4,
  baseDelayMs: 100,
  maxDelayMs: 2000,
  unreachableForMs: 10_000,
});

/** Fill defaults and reject bad values, naming the option (`prefix` is how the caller spells it). */
export function resolveRetryOptions(
  options: RetryOptions | undefined,
  prefix = 'retry',
): ResolvedRetryOptions {
  const r = { ...RETRY_DEFAULTS, ...stripUndefined(options ?? {}) };
  if (!Number.isInteger(r.attempts) || r.attempts < 1 || r.attempts > 100) {
    throw new InvalidOptionError(`${prefix}.attempts`, 'must be an integer from 1 to 100', r.attempts);
  }
  if (!Number.isFinite(r.baseDelayMs) || r.baseDelayMs < 0) {
    throw new InvalidOptionError(`${prefix}.baseDelayMs`, 'must be a number >= 0', r.baseDelayMs);
  }
  if (!Number.isFinite(r.maxDelayMs) || r.maxDelayMs < r.baseDelayMs) {
    throw new InvalidOptionError(
      `${prefix}.maxDelayMs`,
      `must be a number >= baseDelayMs (${r.baseDelayMs})`,
      r.maxDelayMs,
    );
  }
  if (!Number.isInteger(r.unreachableForMs) || r.unreachableForMs < 0 || r.unreachableForMs > 3_600_000) {
    throw new InvalidOptionError(
      `${prefix}.unreachableForMs`,
      'must be an integer from 0 to 3600000 (an hour)',
      r.unreachableForMs,
    );
  }
  return r;
}

/**
 * The delay before retry number `retry` (1-based): half fixed, half random ("equal jitter"), so
 * a fleet that failed together does not retry together.
 */
export function backoffDelayMs(
  retry: number,
  policy: Pick<ResolvedRetryOptions, 'baseDelayMs' | 'maxDelayMs'>,
  random: () => number = Math.random,
): number {
  const capped = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return capped / 2 + random() * (capped / 2);
}

/**
 * Resolve after `ms`, or reject with `signal.reason` as soon as `signal` aborts. The timer keeps the
 * process alive unless `unref` is set.
 */
export function sleepMs(ms: number, signal?: AbortSignal, unref = false): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (unref) timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
