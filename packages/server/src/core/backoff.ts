/**
 * Retry backoff (docs/design.md §4): `min(cap, base × 2^(retry-1))`, optional jitter.
 * Retry 1 waits 1 s, retry 2 waits 2 s, retry 3 waits 4 s … capped at 5 min by default.
 */
import { ValidationError } from './errors.js';

export interface BackoffOptions {
  /** First retry delay. @default 1000 */
  baseMs?: number;
  /** Upper bound on any delay. @default 300000 */
  capMs?: number;
  /** Fraction of the delay randomised (±): 0 = none, 0.2 = ±20 %. @default 0 */
  jitter?: number;
}

export type ResolvedBackoffOptions = Required<BackoffOptions>;

export const DEFAULT_BACKOFF: ResolvedBackoffOptions = { baseMs: 1000, capMs: 300_000, jitter: 0 };

export function resolveBackoffOptions(options: BackoffOptions = {}): ResolvedBackoffOptions {
  const r = { ...DEFAULT_BACKOFF, ...stripUndefined(options) };
  if (!Number.isInteger(r.baseMs) || r.baseMs < 0)
    throw new ValidationError('backoff.baseMs', 'must be an integer >= 0');
  if (!Number.isInteger(r.capMs) || r.capMs < r.baseMs)
    throw new ValidationError('backoff.capMs', 'must be an integer >= backoff.baseMs');
  if (!(r.jitter >= 0 && r.jitter <= 1))
    throw new ValidationError('backoff.jitter', 'must be between 0 and 1');
  return r;
}

/**
 * Delay before retry number `retry` (1 = the first retry, i.e. the second attempt).
 * `random` is injected so the core stays deterministic under test.
 */
export function backoffDelayMs(
  retry: number,
  options: ResolvedBackoffOptions = DEFAULT_BACKOFF,
  random: () => number = () => 0.5,
): number {
  const n = Math.max(1, Math.floor(retry));
  // 2^(n-1) overflows to Infinity for huge n; min() with the cap keeps it finite.
  const raw = Math.min(options.capMs, options.baseMs * 2 ** (n - 1));
  if (options.jitter === 0) return raw;
  const spread = raw * options.jitter * (2 * random() - 1);
  return Math.max(0, Math.min(options.capMs, Math.round(raw + spread)));
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
